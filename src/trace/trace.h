/*
 * trace.h - readers for the Alibaba GPU trace 2023 CSVs (the FGD paper's
 * openb_node_list_*.csv and openb_pod_list_*.csv), and any CSV with the
 * same column names.
 *
 * Nodes:  cpu_milli, memory_mib, gpu, model required; sn optional.
 * Pods:   cpu_milli, memory_mib, num_gpu, gpu_milli required; name and
 *         gpu_spec ("M1|M2", empty = any model) optional.
 * Unknown columns are ignored.  A bad row is an error naming file:line,
 * the field and what was wrong; a missing required column is named.
 * Nothing is half-loaded: on error the caller releases what it passed in.
 */
#ifndef GF_TRACE_TRACE_H
#define GF_TRACE_TRACE_H

#include <gpufleet/cluster.h>
#include <gpufleet/err.h>
#include <gpufleet/workload.h>

int gf_trace_load_nodes(const char *path, struct gf_cluster *c,
			struct gf_err *e) GF_MUST_CHECK;

/* Model names in gpu_spec are interned in c's model table. */
int gf_trace_load_pods(const char *path, struct gf_cluster *c,
		       struct gf_workload *w, struct gf_err *e) GF_MUST_CHECK;

#endif
