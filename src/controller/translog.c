/*
 * translog.c - one structured log line per job transition, for the
 * operator (GPUFLEET_LOG=info): submitted, placed (node and GPUs of each
 * replica), requeued or preempted (why), completing (replicas held until
 * their processes are gone), ended (state, exit code, reason).  Called
 * on the scheduler thread for every job a turn changed; it remembers the
 * state and run it last logged per job, so each transition is said once.
 * Lines read `job=j12 placed attempt=2 node=hgx-a gpus=0,1`.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "controller/service_impl.h"
#include "util/log.h"
#include "util/mem.h"

struct gf_translog {
	struct seen {
		int32_t attempts;
		uint8_t state; /* enum gf_job_state + 1; 0: not seen */
		uint8_t nheld;
	} * v;
	size_t cap;
};

static void translog_free(void *arg)
{
	struct gf_service *s = arg;
	struct gf_translog *t = s->tlog;
	if (!t)
		return;
	gf_free(t->v);
	gf_free(t);
}

static struct seen *seen_of(struct gf_service *s, uint64_t seq)
{
	if (!s->tlog)
		s->tlog = gf_calloc(1, sizeof(*s->tlog));
	struct gf_translog *t = s->tlog;
	t->v = gf_grow(t->v, sizeof(*t->v), &t->cap, seq, 1024);
	return &t->v[seq];
}

static void placed(const struct gf_job *j)
{
	char where[512];
	size_t len = 0;
	where[0] = '\0';
	for (int r = 0; r < j->spec.replicas && len + 80 < sizeof(where); r++) {
		const struct gf_job_place *p = &j->place[r];
		len += (size_t)snprintf(where + len, sizeof(where) - len,
					" node=%s gpus=", p->node_name);
		for (int g = 0; g < p->ngpus && len + 8 < sizeof(where); g++)
			len += (size_t)snprintf(where + len,
						sizeof(where) - len, "%s%d",
						g ? "," : "", p->gpus[g]);
		if (p->ngpus == 0)
			len += (size_t)snprintf(where + len,
						sizeof(where) - len, "-");
	}
	gf_log(GF_LOG_INFO, "serve", "job=%s placed attempt=%d%s%s", j->id,
	       j->attempts, where, j->spec.replicas > 8 ? " ..." : "");
}

/* A job the turn changed: a line for each transition. */
static void translog(void *arg, const struct gf_job *j)
{
	struct gf_service *s = arg;
	if (!j || gf_log_get_level() < GF_LOG_INFO)
		return;
	struct seen *x = seen_of(s, j->seq);
	int was = x->state ? x->state - 1 : -1;
	bool new_run = j->state == GF_JOB_RUNNING &&
		       (was != GF_JOB_RUNNING || x->attempts != j->attempts);
	if (was < 0 && j->state == GF_JOB_PENDING)
		gf_log(GF_LOG_INFO, "serve",
		       "job=%s submitted team=%s class=%s replicas=%d "
		       "gpus=%d gpu_milli=%d mig=%s",
		       j->id, j->spec.team, j->spec.class_name,
		       j->spec.replicas, j->spec.gpus, j->spec.gpu_milli,
		       j->spec.mig_profile[0] ? j->spec.mig_profile : "-");
	else if (new_run && j->place)
		placed(j);
	else if (was == GF_JOB_RUNNING && j->state == GF_JOB_PENDING)
		gf_log(GF_LOG_INFO, "serve", "job=%s requeued attempt=%d: %s",
		       j->id, j->attempts, j->reason);
	else if (was != (int)j->state && gf_job_is_final(j->state))
		gf_log(GF_LOG_INFO, "serve",
		       "job=%s ended state=%s exit=%d runs=%d reason=%s", j->id,
		       gf_job_state_name(j->state),
		       j->state == GF_JOB_CANCELLED ? -1 : j->exit_code,
		       j->attempts, j->reason);
	if (j->nheld > x->nheld)
		gf_log(GF_LOG_INFO, "serve",
		       "job=%s completing: %d replica%s held until %s "
		       "processes are gone",
		       j->id, j->nheld, j->nheld == 1 ? "" : "s",
		       j->nheld == 1 ? "its" : "their");
	x->state = (uint8_t)(j->state + 1);
	x->attempts = j->attempts;
	x->nheld = (uint8_t)(j->nheld > 255 ? 255 : j->nheld);
}

int gf__translog_register(struct gf_service *s)
{
	struct gf_feature f = {
		.name = "translog",
		.arg = s,
		.changed = translog,
		.free = translog_free,
	};
	return gf__service_register(s, &f);
}
