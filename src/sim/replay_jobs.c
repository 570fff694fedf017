/*
 * replay_jobs.c - a replay's jobs as CSV rows (replay_jobs.h has the
 * columns).  Pure formatting into a bounded buffer: the caller writes
 * the file.  Names are the trace's (teams, classes, models: read from
 * its file, which the CSV reader capped; commas are never in them, as
 * the readers split on commas).
 */
#include "sim/replay_jobs.h"

#include <inttypes.h>

#include <gpufleet/sched.h>

const char *gf_replay_fate_name(enum gf_replay_fate f)
{
	static const char *const names[] = {
		[GF_REPLAY_NOT_ARRIVED] = "not_arrived",
		[GF_REPLAY_REFUSED] = "refused",
		[GF_REPLAY_QUEUED] = "queued",
		[GF_REPLAY_RUNNING] = "running",
		[GF_REPLAY_COMPLETED] = "completed",
		[GF_REPLAY_DELETED] = "deleted",
		[GF_REPLAY_FAILED] = "failed",
	};
	return (unsigned)f < sizeof(names) / sizeof(names[0]) && names[f]
		       ? names[f]
		       : "unknown";
}

void gf_replay_jobs_header(struct gf_buf *b)
{
	gf_buf_puts(b, "policy,job,line,team,class,replicas,gpus,gpu_milli,"
		       "cpu_milli,memory_mib,model,arrival_s,first_start_s,"
		       "end_s,run_s,fate\n");
}

/* ",%.3f" of ms, or "," when negative (never). */
static void secs(struct gf_buf *b, int64_t ms)
{
	if (ms < 0)
		gf_buf_puts(b, ",");
	else
		gf_buf_printf(b, ",%" PRId64 ".%03d", ms / 1000,
			      (int)(ms % 1000));
}

void gf_replay_jobs_rows(struct gf_buf *b, const struct gf_replay_trace *t,
			 const struct gf_replay_result *r)
{
	const char *policy = gf_policy_name(r->policy);
	for (int k = 0; k < t->n && k < r->jobs; k++) {
		const struct gf_replay_job *x = &t->jobs[k];
		const char *team = x->team < t->nteams ? t->teams[x->team] : "";
		const char *cls =
			x->cls < t->nclasses ? t->classes[x->cls] : "";
		const char *model = x->model >= 0 && x->model < t->nmodels
					    ? t->models[x->model]
					    : "";
		gf_buf_printf(b, "%s,%d,%d,%s,%s,%d,%d,%d,%d,%" PRId64 ",%s",
			      policy, k, (int)x->line, team, cls,
			      x->replicas > 0 ? x->replicas : 1, x->gpus,
			      x->gpu_milli, (int)x->cpu_milli, x->memory_mib,
			      model);
		enum gf_replay_fate f = (enum gf_replay_fate)r->fate[k];
		secs(b, f == GF_REPLAY_NOT_ARRIVED ? -1 : x->arrival_ms);
		secs(b, r->first_start_ms[k]);
		secs(b, r->end_at_ms[k]);
		secs(b, r->run_ms[k]);
		gf_buf_printf(b, ",%s\n", gf_replay_fate_name(f));
	}
}
