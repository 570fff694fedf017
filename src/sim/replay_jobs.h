/*
 * replay_jobs.h - a replay's jobs one by one, as CSV (`simulate replay
 * --jobs-csv FILE`): what each job asked for, when it arrived, first
 * started and ended, and what became of it, under each policy; so that
 * where a policy made jobs wait can be read by shape (whole GPUs or a
 * share, a model named, a gang) and not only in the percentiles.
 *
 * Columns: policy, job (trace order, 0..), line (in the trace file),
 * team, class, replicas, gpus, gpu_milli (a share of one GPU, 0 for
 * whole GPUs), cpu_milli, memory_mib, model ("" any), arrival_s,
 * first_start_s, end_s (empty: never), run_s (placed run time), fate
 * (not_arrived refused queued running completed deleted failed).
 * Seconds with three decimals.
 */
#ifndef GF_SIM_REPLAY_JOBS_H
#define GF_SIM_REPLAY_JOBS_H

#include "sim/replay.h"
#include "util/buf.h"

/* The header line into b. */
void gf_replay_jobs_header(struct gf_buf *b);
/* A row for each job of t under r (r's policy) into b. */
void gf_replay_jobs_rows(struct gf_buf *b, const struct gf_replay_trace *t,
			 const struct gf_replay_result *r);
/* A fate's name ("completed"). */
const char *gf_replay_fate_name(enum gf_replay_fate f);

#endif
