/*
 * fuzz_trace_csv.c - the CSV traces of src/sim and src/autoscale, one
 * file through every reader: the fill simulator's nodes and pods
 * (trace.c), the replay sources alibaba2023, philly, dlrm2025 and
 * Philly's virtual clusters (replay_trace.c), the autoscaling arrival
 * trace (as_trace.c) and the HPA samples (autoscale/samples.c).
 */
#include <gpufleet/cluster.h>
#include <gpufleet/workload.h>

#include "autoscale/autoscale.h"
#include "fuzz.h"
#include "sim/autoscale.h"
#include "sim/replay.h"
#include "trace/trace.h"

static void replay_as(const char *path, enum gf_replay_source s)
{
	struct gf_replay_trace t;
	struct gf_replay_load_opts o = { .cpu_instances = true };
	struct gf_err e = { 0 };
	gf_replay_trace_init(&t);
	fz_answer("replay", gf_replay_load(path, s, &o, &t, &e), &e);
	gf_replay_trace_release(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size, ".csv");
	struct gf_err e = { 0 };
	static struct gf_cluster c;
	gf_cluster_init(&c);
	fz_answer("nodes", gf_trace_load_nodes(path, &c, &e), &e);
	gf_cluster_release(&c);

	struct gf_workload w;
	gf_cluster_init(&c);
	gf_workload_init(&w);
	fz_answer("pods", gf_trace_load_pods(path, &c, &w, &e), &e);
	gf_workload_release(&w);
	gf_cluster_release(&c);

	replay_as(path, GF_REPLAY_ALIBABA2023);
	replay_as(path, GF_REPLAY_PHILLY);
	replay_as(path, GF_REPLAY_DLRM2025);
	char names[16][GF_NODE_NAME_MAX];
	int count[16];
	fz_answer("vcs", gf_replay_philly_vcs(path, names, count, 16, &e), &e);

	struct gf_as_trace t = { 0 };
	int rc = gf_as_trace_read(path, &t, &e);
	fz_answer("as-trace", rc, &e);
	if (rc == 0)
		gf_as_trace_release(&t);
	struct gf_as_samples s = { 0 };
	rc = gf_as_read_samples(path, &s, &e);
	fz_answer("samples", rc, &e);
	if (rc == 0)
		gf_as_samples_release(&s);
	return 0;
}
