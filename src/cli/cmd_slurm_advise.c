/*
 * cmd_slurm_advise.c - `gpufleet slurm advise`: GPU fragmentation per
 * node and partition of a running Slurm cluster (FGD's measure), and
 * where pending jobs or request shapes would fragment least, on the best
 * connected GPUs (src/slurm/advise.h).  Reads slurmctld through libslurm,
 * or saved scontrol output.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/gpu_topo.h>

#include "cli/cli.h"
#include "cli/slurm_cli.h"
#include "slurm/advise.h"
#include "slurm/slurm_api.h"
#include "util/fmt.h"
#include "util/json.h"

#define CMD "slurm advise"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet slurm advise [--job ID | --gpus LIST "
		"[--cpus N] [--partition P]]\n"
		"                             [--nodes-file FILE [--jobs-file "
		"FILE]]\n"
		"                             [--xml FILE | --nccl-xml FILE | "
		"--template NAME]\n"
		"                             [--json | --lines]\n"
		"\n"
		"Read the running allocation from slurmctld (libslurm: "
		"slurm_load_node,\nslurm_load_partitions, slurm_load_jobs) and "
		"report each node's and partition's\nGPU fragmentation by "
		"FGD's measure: the idle GPUs a typical job of this\ncluster "
		"could not use.  Then, for each pending GPU job in priority "
		"order, the\nnode and GPU indexes where it fragments least, "
		"best connected when the\nnodes' topology is given.\n"
		"\n"
		"  --job ID          only this pending job (after those before "
		"it in the queue)\n"
		"  --gpus LIST       request shapes instead (e.g. 1,2,4,8 "
		"GPUs on one node),\n"
		"                    each tried alone on what runs now: for a "
		"job_submit script\n"
		"  --cpus N          CPUs per shape (default 1)\n"
		"  --partition P     nodes of partition P only (with --gpus)\n"
		"  --nodes-file F    saved `scontrol -o show node` instead of "
		"libslurm\n"
		"  --jobs-file F     saved `scontrol -d -o show job` (with "
		"--nodes-file)\n"
		"  --xml FILE, --nccl-xml FILE, --template NAME\n"
		"                    the GPU topology of the nodes with as many "
		"GPUs (to choose\n"
		"                    the best connected GPUs; without it, the "
		"lowest free indexes)\n"
		"  --json            JSON\n"
		"  --lines           one line per proposal: job=ID node=N "
		"gpus=I,J dfrag=X\n"
		"  -h, --help        this help\n" GF_CLI_EXIT_HELP);
}

struct args {
	struct gf_slurm_advise_opts o;
	const char *nodes_file, *jobs_file;
	struct gf_node_opts no;
	bool topo, json, lines;
};

static int parse_gpus(const char *s, struct gf_slurm_advise_opts *o)
{
	o->nshapes = 0;
	for (const char *p = s; *p;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < 1 || v > GF_CNODE_MAX_GPUS ||
		    o->nshapes == GF_SLURM_SHAPES_MAX || (*end && *end != ','))
			return -1;
		o->shape_gpus[o->nshapes++] = (int)v;
		p = *end ? end + 1 : end;
	}
	return o->nshapes ? 0 : -1;
}

/* The options into a: -1 to go on, else the exit status (-h answered,
 * or what was wrong said). */
static int parse_args(int argc, char **argv, struct args *a)
{
	long job = 0;
	const struct gf_cli_opt opts[] = {
		GF_OPT_NUM("job", &job, 1, 0xfffffffeL, "a job id"),
		GF_OPT_ARG("gpus", 'g'),
		GF_OPT_NUM("cpus", &a->o.shape_cpus, 1, 100000, "a CPU count"),
		GF_OPT_STR("partition", &a->o.shape_partition),
		GF_OPT_STR("nodes-file", &a->nodes_file),
		GF_OPT_STR("jobs-file", &a->jobs_file),
		GF_OPT_FLAG("json", &a->json),
		GF_OPT_FLAG("lines", &a->lines),
		GF_OPT_END,
	};
	struct gf_cli_args args = GF_CLI_ARGS(CMD, argc, argv, opts, usage);
	args.node = &a->no;
	while (gf_cli_next(&args) != -1) /* 'g', --gpus */
		if (parse_gpus(optarg, &a->o))
			(void)gf_cli_bad_value(&args,
					       "expected up to %d counts from "
					       "1 to %d, like 1,2,4,8",
					       GF_SLURM_SHAPES_MAX,
					       GF_CNODE_MAX_GPUS);
	if (args.rc >= 0)
		return args.rc;
	a->o.job = (uint32_t)job;
	a->topo =
		a->no.src.xml || a->no.src.nccl_xml || a->no.src.template_name;
	const char *bad =
		optind < argc			 ? "an unexpected argument"
		: a->o.job && a->o.nshapes	 ? "--job and --gpus"
		: a->jobs_file && !a->nodes_file ? "--jobs-file alone"
		: a->json && a->lines		 ? "--json and --lines"
		: (a->o.shape_cpus || a->o.shape_partition) && !a->o.nshapes
			? "--cpus or --partition without --gpus"
			: NULL;
	if (bad) {
		gf_cli_error(CMD, "cannot use %s (see 'gpufleet %s -h')", bad,
			     CMD);
		return GF_EXIT_USAGE;
	}
	a->o.shapes_only = a->o.nshapes > 0;
	return gf_cli_node_check(&a->no) ? GF_EXIT_USAGE : -1;
}

static int load_topo(struct args *a, struct gf_gpu_topo *t)
{
	if (!a->topo)
		return 0;
	struct gf_node *n = gf_cli_load_node(&a->no);
	if (!n)
		return GF_EXIT_FAIL;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_gpu_topo_from_node(n, t, &e);
	gf_node_free(n);
	if (rc) {
		gf_cli_error(CMD, "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	a->o.topo = t;
	return 0;
}

static void gpu_list(const struct gf_slurm_proposal *p, int k, char *out,
		     size_t size)
{
	size_t len = 0;
	out[0] = '\0';
	for (int g = 0; g < p->gpus_per_node && len + 4 < size; g++)
		len += (size_t)snprintf(out + len, size - len, "%s%d",
					g ? "," : "", p->gpu[k][g]);
}

static void text_nodes(const struct gf_slurm_snapshot *s,
		       const struct gf_slurm_advice *a, struct gf_buf *b)
{
	gf_buf_printf(b, "%-16s %-16s %-10s %4s %4s %4s %6s  %s\n", "NODE",
		      "PARTITIONS", "TYPE", "GPUS", "USED", "FREE", "FRAG",
		      "STATE");
	for (int i = 0; i < s->nnodes; i++) {
		const struct gf_slurm_node *n = &s->nodes[i];
		char f[16] = "-";
		if (!isnan(a->node_frag[i]))
			gf_note(f, sizeof(f), "%.2f", a->node_frag[i]);
		gf_buf_printf(b, "%-16s %-16s %-10s %4d %4d %4d %6s  %s\n",
			      n->name, n->partitions[0] ? n->partitions : "-",
			      n->gpu_type[0] ? n->gpu_type : "-", n->ngpus,
			      __builtin_popcountll(n->used), a->node_free[i], f,
			      n->unusable ? "unusable" : "up");
	}
	gf_buf_printf(b, "\n%-16s %5s %5s %5s %7s %6s\n", "PARTITION", "NODES",
		      "GPUS", "FREE", "FRAG", "FRAG%");
	for (int i = 0; i < a->nparts; i++) {
		const struct gf_slurm_part_frag *p = &a->parts[i];
		gf_buf_printf(b, "%-16s %5d %5d %5d %7.2f %5.1f%%\n", p->name,
			      p->nodes, p->gpus, p->free, p->frag,
			      p->free ? 100.0 * p->frag / p->free : 0.0);
	}
	gf_buf_printf(b,
		      "\ncluster: %d GPUs, %d free, fragmentation %.2f GPUs "
		      "(%.1f%% of the free)\n",
		      a->gpus, a->free, a->frag,
		      a->free ? 100.0 * a->frag / a->free : 0.0);
	gf_buf_printf(b, "typical jobs (%s):",
		      a->typ_jobs ? "this cluster's" : "none yet: a default");
	for (int i = 0; i < a->ntyp; i++)
		gf_buf_printf(b, "%s %d GPU%s x %d CPU %.0f%%", i ? "," : "",
			      a->typ[i].ngpus, a->typ[i].ngpus == 1 ? "" : "s",
			      a->typ[i].cpu / 1000, 100 * a->typ[i].p);
	gf_buf_putc(b, '\n');
}

static void text_props(const struct gf_slurm_snapshot *s,
		       const struct gf_slurm_advice *a, bool lines,
		       struct gf_buf *b)
{
	if (!lines)
		gf_buf_printf(b, "\n%-10s %-12s %4s %5s  %-16s %-12s %6s %s\n",
			      "JOB", "PARTITION", "GPUS", "NODES", "NODE",
			      "GPU_IDX", "dFRAG", "LINKS");
	for (int i = 0; i < a->nprops; i++) {
		const struct gf_slurm_proposal *p = &a->props[i];
		char job[16] = "shape", q[16], g[128];
		if (p->job)
			gf_note(job, sizeof(job), "%u", p->job);
		gf_slurm_quality_name(p->min_pair, q, sizeof(q));
		if (lines) {
			gf_buf_printf(b, "job=%s gpus=%d partition=%s", job,
				      p->gpus_per_node,
				      p->partition[0] ? p->partition : "-");
			for (int k = 0; p->placed && k < p->nodes; k++) {
				gpu_list(p, k, g, sizeof(g));
				gf_buf_printf(b, " node=%s gpu_idx=%s",
					      s->nodes[p->node[k]].name, g);
			}
			if (p->placed)
				gf_buf_printf(b, " dfrag=%.3f links=%s\n",
					      p->dfrag, q);
			else
				gf_buf_puts(b, " node=none\n");
			continue;
		}
		if (!p->placed) {
			gf_buf_printf(b, "%-10s %-12s %4d %5d  %s\n", job,
				      p->partition[0] ? p->partition : "-",
				      p->gpus_per_node, p->nodes, p->why);
			continue;
		}
		for (int k = 0; k < p->nodes; k++) {
			gpu_list(p, k, g, sizeof(g));
			gf_buf_printf(b,
				      "%-10s %-12s %4d %5d  %-16s %-12s %+6.2f "
				      "%s\n",
				      k ? "" : job,
				      p->partition[0] ? p->partition : "-",
				      p->gpus_per_node, p->nodes,
				      s->nodes[p->node[k]].name, g, p->dfrag,
				      q);
		}
	}
}

static void json_out(const struct gf_slurm_snapshot *s,
		     const struct gf_slurm_advice *a, struct gf_buf *b)
{
	struct gf_json j;
	char tmp[128];
	gf_json_init(&j, b);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "source", s->source);
	gf_json_int(&j, "gpus", a->gpus);
	gf_json_int(&j, "free", a->free);
	gf_json_double(&j, "frag", a->frag);
	gf_json_arr_begin(&j, "nodes");
	for (int i = 0; i < s->nnodes; i++) {
		gf_json_obj_begin(&j, NULL);
		gf_json_str(&j, "name", s->nodes[i].name);
		gf_json_str(&j, "partitions", s->nodes[i].partitions);
		gf_json_int(&j, "gpus", s->nodes[i].ngpus);
		gf_json_int(&j, "free", a->node_free[i]);
		if (isnan(a->node_frag[i]))
			gf_json_null(&j, "frag");
		else
			gf_json_double(&j, "frag", a->node_frag[i]);
		gf_json_bool(&j, "usable", !s->nodes[i].unusable);
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_arr_begin(&j, "partitions");
	for (int i = 0; i < a->nparts; i++) {
		gf_json_obj_begin(&j, NULL);
		gf_json_str(&j, "name", a->parts[i].name);
		gf_json_int(&j, "gpus", a->parts[i].gpus);
		gf_json_int(&j, "free", a->parts[i].free);
		gf_json_double(&j, "frag", a->parts[i].frag);
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_arr_begin(&j, "proposals");
	for (int i = 0; i < a->nprops; i++) {
		const struct gf_slurm_proposal *p = &a->props[i];
		gf_json_obj_begin(&j, NULL);
		if (p->job)
			gf_json_uint(&j, "job", p->job);
		else
			gf_json_null(&j, "job");
		gf_json_int(&j, "gpus_per_node", p->gpus_per_node);
		gf_json_bool(&j, "placed", p->placed);
		gf_json_arr_begin(&j, "nodes");
		for (int k = 0; p->placed && k < p->nodes; k++) {
			gf_json_obj_begin(&j, NULL);
			gf_json_str(&j, "node", s->nodes[p->node[k]].name);
			gf_json_arr_begin(&j, "gpu_idx");
			for (int g = 0; g < p->gpus_per_node; g++)
				gf_json_int(&j, NULL, p->gpu[k][g]);
			gf_json_arr_end(&j);
			gf_json_obj_end(&j);
		}
		gf_json_arr_end(&j);
		gf_json_double(&j, "dfrag", p->dfrag);
		gf_slurm_quality_name(p->min_pair, tmp, sizeof(tmp));
		gf_json_str(&j, "weakest_link", tmp);
		if (!p->placed)
			gf_json_str(&j, "why", p->why);
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_obj_end(&j);
	gf_buf_putc(b, '\n');
}

int gf_cmd_slurm_advise(int argc, char **argv)
{
	struct args a = { .no = { .cmd = CMD, .src.nvml = -1 } };
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	struct gf_gpu_topo topo;
	if ((rc = load_topo(&a, &topo)) != 0)
		return rc;
	struct gf_slurm_snapshot s;
	struct gf_slurm_advice adv;
	struct gf_err e;
	gf_err_clear(&e);
	gf_slurm_snapshot_init(&s);
	rc = a.nodes_file ? gf_slurm_snapshot_read_scontrol(&s, a.nodes_file,
							    a.jobs_file, &e)
			  : gf_slurm_api_load(&s, &e);
	if (rc == 0)
		rc = gf_slurm_advise(&s, &a.o, &adv, &e);
	if (rc) {
		gf_cli_error(CMD, "%s", e.msg);
		gf_slurm_snapshot_release(&s);
		return GF_EXIT_FAIL;
	}
	for (int i = 0; i < adv.nnotes; i++)
		gf_cli_error(CMD, "note: %s", adv.notes[i]);
	struct gf_buf b;
	gf_buf_init(&b, 64u << 20);
	if (a.json)
		json_out(&s, &adv, &b);
	else if (a.lines)
		text_props(&s, &adv, true, &b);
	else {
		text_nodes(&s, &adv, &b);
		text_props(&s, &adv, false, &b);
	}
	int ret = gf_cli_print_buf(CMD, 0, &b);
	gf_buf_release(&b);
	gf_slurm_advice_release(&adv);
	gf_slurm_snapshot_release(&s);
	return ret;
}
