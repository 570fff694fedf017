/*
 * job.c - the job on its own: state names, the spec's field checks,
 * copies, and the invariants of one job (gf_job_check), as job.h lists
 * them.  Nothing here knows a cluster or a config: gf_ctl_admit checks a
 * spec against those.
 *
 * Invariants kept: a spec that passes gf_job_spec_check has every string
 * NUL-terminated inside its array, every number inside its cap, at most
 * one GPU kind, and a selector of the form "k=v,k=v"; the messages name
 * the field first ("'gpu_milli': expected 1 to 1000, got 1500").
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/err.h>
#include <gpufleet/job.h>
#include <gpufleet/mig.h>

#include "core/jobs/ctl_impl.h"
#include "core/jobs/jobs_find.h"
#include "core/jobs/mask.h"
#include "util/fmt.h"
#include "util/mem.h"
#include "util/str.h"

static const char *const state_names[] = {
	[GF_JOB_PENDING] = "pending",	  [GF_JOB_RUNNING] = "running",
	[GF_JOB_SUCCEEDED] = "succeeded", [GF_JOB_FAILED] = "failed",
	[GF_JOB_CANCELLED] = "cancelled",
};

#define NSTATES ((int)(sizeof(state_names) / sizeof(state_names[0])))

const char *gf_job_state_name(enum gf_job_state s)
{
	return (int)s >= 0 && (int)s < NSTATES ? state_names[s] : "?";
}

int gf_job_state_parse(const char *s, enum gf_job_state *out)
{
	for (int i = 0; s && i < NSTATES; i++)
		if (strcmp(s, state_names[i]) == 0) {
			*out = (enum gf_job_state)i;
			return 0;
		}
	return GF_ENOTFOUND;
}

bool gf_job_is_final(enum gf_job_state s)
{
	return s == GF_JOB_SUCCEEDED || s == GF_JOB_FAILED ||
	       s == GF_JOB_CANCELLED;
}

/* A name field (a team, a class, a model): letters, digits, '.', '_',
 * '-', ending inside its array of size; "" too when optional.  0, or
 * GF_EINVAL naming the field. */
static int name_field(const char *field, const char *s, size_t size,
		      bool optional, struct gf_err *e)
{
	if (gf__name_ok(s, size) || (optional && s[0] == '\0'))
		return 0;
	return gf_err_set(e, GF_EINVAL,
			  "'%s': expected %s %d of letters, digits, '.', '_' "
			  "or '-'",
			  field, optional ? "up to" : "1 to", (int)size - 1);
}

/* The environment's size, the directory and the user (issue 21). */
static int check_run_as(const struct gf_job_spec *s, struct gf_err *e)
{
	/* the JSON text of at most GF_JOB_ENV_BYTES of variables, each
	 * byte escaped at worst as \u00XX, with its quotes */
	if (s->env &&
	    strnlen(s->env, 8 * GF_JOB_ENV_BYTES) >= 8 * GF_JOB_ENV_BYTES)
		return gf_err_set(e, GF_EINVAL, "'env': too long");
	if (!memchr(s->workdir, '\0', sizeof(s->workdir)) ||
	    (s->workdir[0] && s->workdir[0] != '/'))
		return gf_err_set(e, GF_EINVAL,
				  "'workdir': expected an absolute path under "
				  "%d bytes",
				  GF_JOB_WORKDIR_MAX);
	if (s->user[0] && !gf_str_is_login(s->user))
		return gf_err_set(e, GF_EINVAL,
				  "'user': expected a login of 1 to %d "
				  "letters, digits, '_', '-' or '.'",
				  GF_JOB_USER_MAX - 1);
	return 0;
}

/* The text fields: each ends inside its array and has its syntax. */
static int check_text(const struct gf_job_spec *s, struct gf_err *e)
{
	if (!memchr(s->name, '\0', sizeof(s->name)))
		return gf_err_set(e, GF_EINVAL, "'name': longer than %d bytes",
				  GF_JOB_NAME_MAX - 1);
	for (const char *p = s->name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return gf_err_set(e, GF_EINVAL,
					  "'name': control character at byte "
					  "%d",
					  (int)(p - s->name));
	int rc = name_field("service", s->service, sizeof(s->service), true, e);
	if (rc == 0)
		rc = name_field("team", s->team, sizeof(s->team), false, e);
	if (rc == 0)
		rc = name_field("class", s->class_name, sizeof(s->class_name),
				false, e);
	if (rc == 0)
		rc = name_field("gpu_model", s->gpu_model, sizeof(s->gpu_model),
				true, e);
	if (rc)
		return rc;
	if (!memchr(s->mig_profile, '\0', sizeof(s->mig_profile)) ||
	    (s->mig_profile[0] && !gf_mig_profile_name_ok(s->mig_profile)))
		return gf_err_set(e, GF_EINVAL,
				  "'mig_profile': expected a MIG profile "
				  "such as 1g.10gb");
	if (!memchr(s->node_selector, '\0', sizeof(s->node_selector)))
		return gf_err_set(e, GF_EINVAL,
				  "'node_selector': longer than %d bytes",
				  GF_SELECTOR_MAX - 1);
	char why[128];
	if (gf__labels_check(s->node_selector, why, sizeof(why)))
		return gf_err_set(e, GF_EINVAL, "'node_selector': %s", why);
	if (s->command && strnlen(s->command, GF_JOB_CMD_MAX) >= GF_JOB_CMD_MAX)
		return gf_err_set(e, GF_EINVAL,
				  "'command': longer than %d bytes",
				  GF_JOB_CMD_MAX - 1);
	if ((rc = gf_job_path_check("output", s->output, e)) ||
	    (rc = gf_job_path_check("error", s->error, e)))
		return rc;
	return check_run_as(s, e);
}

int gf_job_path_check(const char *field, const char *p, struct gf_err *e)
{
	if (!p)
		return 0;
	if (p[0] != '/')
		return gf_err_set(e, GF_EINVAL,
				  "'%s': expected an absolute path (it is the "
				  "node's), got '%.60s'",
				  field, p);
	if (strnlen(p, GF_JOB_PATH_MAX) >= GF_JOB_PATH_MAX)
		return gf_err_set(e, GF_EINVAL, "'%s': longer than %d bytes",
				  field, GF_JOB_PATH_MAX - 1);
	for (const char *c = p; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return gf_err_set(e, GF_EINVAL,
					  "'%s': a control character in the "
					  "path",
					  field);
		if (*c == '%' && !(c[1] && strchr("jran%", c[1])))
			return gf_err_set(e, GF_EINVAL,
					  "'%s': '%%%.1s' is no token (known: "
					  "%%j job id, %%r replica, %%a "
					  "attempt, %%n node, %%%% a '%%')",
					  field, c + 1);
		if (*c == '%')
			c++;
	}
	return 0;
}

static int range(struct gf_err *e, const char *field, int64_t v, int64_t lo,
		 int64_t hi)
{
	if (v >= lo && v <= hi)
		return 0;
	return gf_err_set(e, GF_EINVAL,
			  "'%s': expected %" PRId64 " to %" PRId64
			  ", got %" PRId64,
			  field, lo, hi, v);
}

static int check_numbers(const struct gf_job_spec *s, struct gf_err *e)
{
	int rc;
	if ((rc = range(e, "replicas", s->replicas, 1, GF_JOB_MAX_REPLICAS)) ||
	    (rc = range(e, "gpus", s->gpus, 0, GF_CNODE_MAX_GPUS)) ||
	    (s->gpu_milli != 0 &&
	     (rc = range(e, "gpu_milli", s->gpu_milli, 1, GF_GPU_MILLI))) ||
	    (rc = range(e, "cpu_milli", s->cpu_milli, 0,
			GF_JOB_CPU_MILLI_MAX)) ||
	    (rc = range(e, "memory_mib", s->memory_mib, 0,
			GF_JOB_MEMORY_MIB_MAX)) ||
	    (rc = range(e, "max_runtime_s", s->max_runtime_s, 0,
			GF_JOB_RUNTIME_MAX_S)))
		return rc;
	int kinds = (s->gpus > 0) + (s->gpu_milli > 0) +
		    (s->mig_profile[0] != '\0');
	if (kinds > 1)
		return gf_err_set(e, GF_EINVAL,
				  "'gpus', 'gpu_milli' and 'mig_profile' "
				  "exclude each other: got %s%s%s",
				  s->gpus > 0 ? "'gpus' " : "",
				  s->gpu_milli > 0 ? "'gpu_milli' " : "",
				  s->mig_profile[0] ? "'mig_profile'" : "");
	if (kinds == 0 && s->gpu_model[0])
		return gf_err_set(e, GF_EINVAL,
				  "'gpu_model': given without 'gpus', "
				  "'gpu_milli' or 'mig_profile'");
	return 0;
}

int gf_job_spec_check(const struct gf_job_spec *s, struct gf_err *e)
{
	int rc = check_text(s, e);
	if (rc == 0)
		rc = check_numbers(s, e);
	return rc;
}

void gf_job_spec_copy(struct gf_job_spec *dst, const struct gf_job_spec *src)
{
	*dst = *src;
	dst->command = src->command ? gf_strdup(src->command) : NULL;
	dst->output = src->output ? gf_strdup(src->output) : NULL;
	dst->error = src->error ? gf_strdup(src->error) : NULL;
	dst->env = src->env ? gf_strdup(src->env) : NULL;
}

void gf_job_spec_release(struct gf_job_spec *s)
{
	gf_free(s->command);
	gf_free(s->output);
	gf_free(s->error);
	gf_free(s->env);
}

void gf_job_release(struct gf_job *j)
{
	gf_job_spec_release(&j->spec);
	gf_free(j->place);
	gf_free(j->held);
	j->nheld = 0;
}

/* One placement (replica r's) against the spec's kind. */
static int check_place(const struct gf_job *j, const struct gf_job_place *p,
		       int r, char *msg, unsigned size)
{
	const struct gf_job_spec *s = &j->spec;
	int want_n = s->gpus > 0			     ? s->gpus
		     : s->gpu_milli > 0 || s->mig_profile[0] ? 1
							     : 0;
	int want_milli = s->gpus > 0 ? GF_GPU_MILLI : s->gpu_milli;
	if (!memchr(p->node_name, '\0', sizeof(p->node_name)) ||
	    !p->node_name[0] || p->ngpus != want_n ||
	    p->gpu_milli != want_milli ||
	    (s->mig_profile[0] ? p->mig_start < 0 : p->mig_start != -1)) {
		gf_note(msg, size,
			"job %s: replica %d: placement is not what the "
			"spec asks",
			j->id, r);
		return GF_EINVAL;
	}
	uint32_t seen = 0;
	for (int g = 0; g < p->ngpus; g++) {
		if (p->gpus[g] < 0 || p->gpus[g] >= GF_CNODE_MAX_GPUS ||
		    (seen >> p->gpus[g] & 1)) {
			gf_note(msg, size,
				"job %s: replica %d: GPU index %d bad or "
				"twice",
				j->id, r, p->gpus[g]);
			return GF_EINVAL;
		}
		seen |= UINT32_C(1) << p->gpus[g];
	}
	return 0;
}

static int check_times(const struct gf_job *j, char *msg, unsigned size)
{
	bool final = gf_job_is_final(j->state);
	if ((j->started_ms != 0 && j->attempts < 1) ||
	    (j->state == GF_JOB_PENDING && j->started_ms != 0) ||
	    (j->ended_ms != 0) != final || j->submitted_ms < 0 ||
	    j->started_ms < 0 || j->ended_ms < 0 || j->gpu_ms < 0 ||
	    j->preemptions > j->attempts || j->preemptions < 0 ||
	    j->failures > j->attempts || j->failures < 0 ||
	    j->requeues > j->attempts || j->requeues < 0) {
		gf_note(msg, size,
			"job %s: times, runs and state disagree "
			"(%s, started %lld, ended %lld, %d runs, %d "
			"preemptions, %d failures, %d requeues, %lld GPU-ms)",
			j->id, gf_job_state_name(j->state),
			(long long)j->started_ms, (long long)j->ended_ms,
			j->attempts, j->preemptions, j->failures, j->requeues,
			(long long)j->gpu_ms);
		return GF_EINVAL;
	}
	if (j->state == GF_JOB_RUNNING &&
	    (j->attempts < 1 || j->started_ms == 0)) {
		gf_note(msg, size, "job %s: running without a start", j->id);
		return GF_EINVAL;
	}
	return 0;
}

/* The replicas still completing: placements of the spec's kind, each
 * (attempt, replica) once, of runs that happened. */
static int check_held(const struct gf_job *j, char *msg, unsigned size)
{
	if (j->nheld < 0 || j->nheld > GF_JOB_HELD_MAX ||
	    (j->nheld > 0) != (j->held != NULL)) {
		gf_note(msg, size, "job %s: %d held replicas", j->id, j->nheld);
		return GF_EINVAL;
	}
	for (int k = 0; k < j->nheld; k++) {
		const struct gf_job_held *h = &j->held[k];
		if (h->attempt < 1 || h->attempt > j->attempts ||
		    h->replica < 0 || h->replica >= j->spec.replicas ||
		    !memchr(h->why, '\0', sizeof(h->why)) || h->since_ms < 0) {
			gf_note(msg, size,
				"job %s: held replica %d of run %d is not "
				"one of its runs",
				j->id, h->replica, h->attempt);
			return GF_EINVAL;
		}
		for (int i = 0; i < k; i++)
			if (j->held[i].attempt == h->attempt &&
			    j->held[i].replica == h->replica) {
				gf_note(msg, size,
					"job %s: replica %d of run %d held "
					"twice",
					j->id, h->replica, h->attempt);
				return GF_EINVAL;
			}
		int rc = check_place(j, &h->place, h->replica, msg, size);
		if (rc)
			return rc;
	}
	return 0;
}

int gf_job_check(const struct gf_job *j, char *msg, unsigned size)
{
	char id[GF_JOB_ID_MAX];
	if (gf_fmt(id, sizeof(id), "j%" PRIu64, j->seq) != 0 || j->seq == 0 ||
	    strcmp(id, j->id) != 0) {
		gf_note(msg, size,
			"job %.*s: id is not j<seq> (seq %" PRIu64 ")",
			GF_JOB_ID_MAX, j->id, j->seq);
		return GF_EINVAL;
	}
	if ((int)j->state < 0 || (int)j->state >= NSTATES) {
		gf_note(msg, size, "job %s: state %d unknown", j->id,
			(int)j->state);
		return GF_EINVAL;
	}
	struct gf_err e;
	if (gf_job_spec_check(&j->spec, &e)) {
		gf_note(msg, size, "job %s: %s", j->id, e.msg);
		return GF_EINVAL;
	}
	if (!memchr(j->reason, '\0', sizeof(j->reason))) {
		gf_note(msg, size, "job %s: reason not terminated", j->id);
		return GF_EINVAL;
	}
	bool running = j->state == GF_JOB_RUNNING;
	if ((j->place != NULL) != running || (j->block >= 0) != running ||
	    j->block < -1) {
		gf_note(msg, size, "job %s: %s with%s placements, block %d",
			j->id, gf_job_state_name(j->state),
			j->place ? "" : "out", j->block);
		return GF_EINVAL;
	}
	for (int r = 0; running && r < j->spec.replicas; r++) {
		int rc = check_place(j, &j->place[r], r, msg, size);
		if (rc)
			return rc;
	}
	int rc = check_times(j, msg, size);
	if (rc == 0)
		rc = check_held(j, msg, size);
	if (rc)
		return rc;
	if (size)
		msg[0] = '\0';
	return 0;
}
