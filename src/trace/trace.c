/*
 * trace.c - trace CSV readers.  Every numeric field is parsed with strtoll
 * and range-checked; the caps (GF_MAX_CNODES nodes, GF_MAX_REQUESTS pods,
 * GF_CSV_LINE_MAX bytes a line) turn hostile input into errors.
 */
#include "trace/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/csv.h"
#include "util/fmt.h"

int gf_trace_load_nodes(const char *path, struct gf_cluster *cl,
			struct gf_err *e)
{
	static const char *const need[] = { "cpu_milli", "memory_mib", "gpu",
					    "model", NULL };
	enum { CPU, MEM, GPU, MODEL };
	int col[MODEL + 1];
	struct gf_csv c;
	int rc = gf_csv_open_cols(&c, path, need, col, e);
	if (rc)
		return rc;
	int csn = gf_csv_column(&c, "sn");
	while ((rc = gf_csv_next(&c, e)) > 0) {
		long long cpu, mem, gpu;
		if ((rc = gf_csv_int(&c, col[CPU], "cpu_milli", 0, INT32_MAX,
				     &cpu, e)) ||
		    (rc = gf_csv_int(&c, col[MEM], "memory_mib", 0,
				     INT64_MAX / 2, &mem, e)) ||
		    (rc = gf_csv_int(&c, col[GPU], "gpu", 0, GF_CNODE_MAX_GPUS,
				     &gpu, e)))
			break;
		const char *model = gf_csv_get(&c, col[MODEL]);
		int m = 0;
		if (gpu > 0) {
			if (*model == '\0') {
				rc = gf_err_set(e, GF_EPARSE,
						"%s:%ld: field 'model': empty "
						"for a node with GPUs",
						path, c.line);
				break;
			}
			m = gf_cluster_model(cl, model);
			if (m < 0) {
				rc = gf_err_set(e, m,
						"%s:%ld: field 'model': more "
						"than %d models, or '%.40s' "
						"too long",
						path, c.line, GF_MAX_MODELS,
						model);
				break;
			}
		}
		char name[GF_NODE_NAME_MAX];
		gf_note(name, sizeof(name), "%s",
			csn >= 0 ? gf_csv_get(&c, csn) : "");
		if (name[0] == '\0')
			gf_note(name, sizeof(name), "node-%d", cl->n);
		int idx = gf_cluster_add(cl, name, (int32_t)cpu, mem, (int)gpu,
					 m);
		if (idx < 0) {
			rc = gf_err_set(e, idx, "%s:%ld: more than %d nodes",
					path, c.line, GF_MAX_CNODES);
			break;
		}
	}
	gf_csv_close(&c);
	if (rc == 0 && cl->n == 0)
		rc = gf_err_set(e, GF_EPARSE, "%s: no nodes", path);
	return rc < 0 ? rc : 0;
}

static int parse_spec(const char *spec, struct gf_cluster *cl, uint32_t *mask,
		      const char *path, long line, struct gf_err *e)
{
	*mask = 0;
	char buf[GF_SPEC_STR_MAX];
	if (strlen(spec) >= sizeof(buf))
		return gf_err_set(e, GF_ETOOBIG,
				  "%s:%ld: field 'gpu_spec': longer than %zu "
				  "bytes",
				  path, line, sizeof(buf) - 1);
	gf_note(buf, sizeof(buf), "%s", spec);
	for (char *p = buf, *q; p && *p; p = q) {
		q = strchr(p, '|');
		if (q)
			*q++ = '\0';
		if (*p == '\0')
			continue;
		int m = gf_cluster_model(cl, p);
		if (m < 0)
			return gf_err_set(e, GF_ETOOBIG,
					  "%s:%ld: field 'gpu_spec': more than "
					  "%d models",
					  path, line, GF_MAX_MODELS);
		*mask |= UINT32_C(1) << m;
	}
	return 0;
}

int gf_trace_load_pods(const char *path, struct gf_cluster *cl,
		       struct gf_workload *w, struct gf_err *e)
{
	static const char *const need[] = { "cpu_milli", "memory_mib",
					    "num_gpu", "gpu_milli", NULL };
	enum { CPU, MEM, NGPU, GMILLI };
	int col[GMILLI + 1];
	struct gf_csv c;
	int rc = gf_csv_open_cols(&c, path, need, col, e);
	if (rc)
		return rc;
	int cname = gf_csv_column(&c, "name");
	int cspec = gf_csv_column(&c, "gpu_spec");
	while ((rc = gf_csv_next(&c, e)) > 0) {
		long long cpu, mem, k, g;
		if ((rc = gf_csv_int(&c, col[CPU], "cpu_milli", 0, INT32_MAX,
				     &cpu, e)) ||
		    (rc = gf_csv_int(&c, col[MEM], "memory_mib", 0,
				     INT64_MAX / 2, &mem, e)) ||
		    (rc = gf_csv_int(&c, col[NGPU], "num_gpu", 0,
				     GF_CNODE_MAX_GPUS, &k, e)) ||
		    (rc = gf_csv_int(&c, col[GMILLI], "gpu_milli", 0,
				     GF_GPU_MILLI, &g, e)))
			break;
		if (k > 1 && g != GF_GPU_MILLI) {
			rc = gf_err_set(e, GF_ERANGE,
					"%s:%ld: field 'gpu_milli': %lld with "
					"num_gpu %lld; a multi-GPU request "
					"takes whole GPUs (1000)",
					path, c.line, g, k);
			break;
		}
		if (k > 0 && g == 0) {
			rc = gf_err_set(e, GF_ERANGE,
					"%s:%ld: field 'gpu_milli': 0 with "
					"num_gpu %lld",
					path, c.line, k);
			break;
		}
		struct gf_req r = { .cpu = cpu ? (int32_t)cpu : 100,
				    .mem = mem,
				    .ngpus = (uint16_t)k,
				    .gpu_milli = (int16_t)(k ? g : 0) };
		const char *spec = cspec >= 0 ? gf_csv_get(&c, cspec) : "";
		if ((rc = parse_spec(spec, cl, &r.spec, path, c.line, e)))
			break;
		int key = gf_workload_spec_key(w, spec);
		if (key < 0) {
			rc = gf_err_set(e, key,
					"%s:%ld: field 'gpu_spec': more than "
					"%d distinct values",
					path, c.line, GF_SPEC_MAX);
			break;
		}
		r.spec_key = (uint16_t)key;
		char name[GF_REQ_NAME_MAX];
		gf_note(name, sizeof(name), "%s",
			cname >= 0 ? gf_csv_get(&c, cname) : "");
		if (name[0] == '\0')
			gf_note(name, sizeof(name), "pod-%08d", w->n);
		if (gf_workload_add(w, name, &r) < 0) {
			rc = gf_err_set(e, GF_ETOOBIG,
					"%s:%ld: more than %d requests", path,
					c.line, GF_MAX_REQUESTS);
			break;
		}
	}
	gf_csv_close(&c);
	if (rc == 0 && w->n == 0)
		rc = gf_err_set(e, GF_EPARSE, "%s: no requests", path);
	return rc < 0 ? rc : 0;
}
