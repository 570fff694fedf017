/*
 * row.c - a job as a row of the jobs table and back, and the rules a job
 * obeys on both ways.
 *
 * The rules are the core's (gf_job_check: the job's invariants, its
 * spec's fields and caps) plus the database's own: seq fits a signed
 * 64-bit key and all text is UTF-8.  Every job written passed them
 * (gf__store_job_check), and so does every job read back (row_read.c).
 * The state is stored by its name (gf_job_state_name), the origin by
 * gf__store_origin_name's: the names are part of the schema.
 *
 * The placement column is compact JSON, one object per replica:
 *   [{"node":"n1","gpus":[0,1],"gpu_milli":1000,"mig_start":-1}, ...]
 * NULL unless the job is RUNNING.  It is read with util/json (jansson).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

const char *const gf__store_col_names[GF__NCOLS] = {
#define GF__STORE_COL_NAME(name, text) text,
	GF__STORE_COLUMNS(GF__STORE_COL_NAME)
#undef GF__STORE_COL_NAME
};

static const char *const origin_names[] = {
	[GF_JOB_ORIGIN_API] = "api",
	[GF_JOB_ORIGIN_K8S] = "k8s",
};
#define NORIGINS ((int)(sizeof(origin_names) / sizeof(origin_names[0])))

const char *gf__store_origin_name(enum gf_job_origin o)
{
	return (int)o >= 0 && (int)o < NORIGINS ? origin_names[o] : "?";
}

int gf__store_origin_parse(const char *name, enum gf_job_origin *out)
{
	for (int k = 0; k < NORIGINS; k++)
		if (strcmp(name, origin_names[k]) == 0) {
			*out = (enum gf_job_origin)k;
			return 0;
		}
	return -1;
}

bool gf__store_utf8_ok(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + len;
	while (p < end) {
		unsigned c = *p++;
		int more;
		uint32_t cp, min;
		if (c == 0)
			return false;
		if (c < 0x80)
			continue;
		if ((c & 0xe0) == 0xc0)
			more = 1, cp = c & 0x1f, min = 0x80;
		else if ((c & 0xf0) == 0xe0)
			more = 2, cp = c & 0x0f, min = 0x800;
		else if ((c & 0xf8) == 0xf0)
			more = 3, cp = c & 0x07, min = 0x10000;
		else
			return false;
		if (end - p < more)
			return false;
		for (int k = 0; k < more; k++) {
			if ((p[k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[k] & 0x3fu);
		}
		p += more;
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
	}
	return true;
}

/* --- the rules ------------------------------------------------------- */

/* Who a message is about: "job 'j12' (seq 12)". */
static void who(const struct gf_job *j, char *out, size_t size)
{
	const char *id = memchr(j->id, '\0', sizeof(j->id)) ? j->id : "?";
	gf_note(out, size, "job '%s' (seq %" PRIu64 ")", id, j->seq);
}

/* A text field that gf_job_check found terminated: UTF-8 too. */
static int check_utf8(const struct gf_job *j, const char *field, const char *v,
		      struct gf_err *e)
{
	char w[GF_JOB_ID_MAX + 40];
	if (!v || gf__store_utf8_ok(v, strlen(v)))
		return 0;
	who(j, w, sizeof(w));
	return gf_err_set(e, GF_EINVAL, "%s: '%s': not valid UTF-8", w, field);
}

int gf__store_job_check(const struct gf_job *j, struct gf_err *e)
{
	char w[GF_JOB_ID_MAX + 40], msg[GF_ERR_MSG_MAX];
	int rc;
	who(j, w, sizeof(w));
	/* the job's own invariants, as the core states them (its message
	 * starts "job ID: ", ours names the seq too) */
	if (gf_job_check(j, msg, sizeof(msg)) != 0) {
		const char *m = msg, *colon = strstr(msg, ": ");
		if (strncmp(msg, "job ", 4) == 0 && colon)
			m = colon + 2;
		return gf_err_set(e, GF_EINVAL, "%s: %s", w, m);
	}
	/* what the database adds: a signed 64-bit key, UTF-8 text
	 * (PostgreSQL refuses anything else; SQLite would keep it, and the
	 * two must agree) */
	if (j->seq > (uint64_t)INT64_MAX)
		return gf_err_set(e, GF_EINVAL, "%s: 'seq': over %" PRId64, w,
				  INT64_MAX);
	const struct gf_job_spec *s = &j->spec;
	if ((rc = check_utf8(j, "name", s->name, e)) ||
	    (rc = check_utf8(j, "node_selector", s->node_selector, e)) ||
	    (rc = check_utf8(j, "command", s->command, e)) ||
	    (rc = check_utf8(j, "output", s->output, e)) ||
	    (rc = check_utf8(j, "error", s->error, e)) ||
	    (rc = check_utf8(j, "env", s->env, e)) ||
	    (rc = check_utf8(j, "workdir", s->workdir, e)) ||
	    (rc = check_utf8(j, "reason", j->reason, e)))
		return rc;
	for (int r = 0; j->place && r < s->replicas; r++)
		if ((rc = check_utf8(j, "placement.node", j->place[r].node_name,
				     e)))
			return rc;
	return 0;
}

/* --- job -> row ------------------------------------------------------ */

void gf__store_params_init(struct gf__params *p)
{
	memset(p, 0, sizeof(*p));
	gf_buf_init(&p->placement, GF_STORE_PLACEMENT_MAX);
	gf_buf_init(&p->held, GF_STORE_PLACEMENT_MAX);
}

void gf__store_params_release(struct gf__params *p)
{
	gf_buf_release(&p->placement);
	gf_buf_release(&p->held);
}

/* A JSON string of a checked (UTF-8, NUL-free) text. */
static void put_json_str(struct gf_buf *b, const char *s)
{
	gf_buf_putc(b, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			gf_buf_putc(b, '\\');
			gf_buf_putc(b, (char)c);
		} else if (c < 0x20) {
			gf_buf_printf(b, "\\u%04x", c);
		} else {
			gf_buf_putc(b, (char)c);
		}
	}
	gf_buf_putc(b, '"');
}

static void one_place_json(struct gf_buf *b, const struct gf_job_place *p)
{
	gf_buf_puts(b, "{\"node\":");
	put_json_str(b, p->node_name);
	gf_buf_puts(b, ",\"gpus\":[");
	for (int k = 0; k < p->ngpus; k++)
		gf_buf_printf(b, k ? ",%d" : "%d", p->gpus[k]);
	gf_buf_printf(b, "],\"gpu_milli\":%d,\"mig_start\":%d}", p->gpu_milli,
		      p->mig_start);
}

static int place_json(const struct gf_job *j, struct gf_buf *b)
{
	gf_buf_reset(b);
	gf_buf_putc(b, '[');
	for (int r = 0; r < j->spec.replicas; r++) {
		if (r)
			gf_buf_putc(b, ',');
		one_place_json(b, &j->place[r]);
	}
	gf_buf_putc(b, ']');
	return gf_buf_error(b);
}

/* [{"attempt":1,"replica":0,"since":MS,"why":"cancelled","place":{...}}] */
static int held_json(const struct gf_job *j, struct gf_buf *b)
{
	gf_buf_reset(b);
	gf_buf_putc(b, '[');
	for (int k = 0; k < j->nheld; k++) {
		const struct gf_job_held *h = &j->held[k];
		gf_buf_printf(
			b,
			"%s{\"attempt\":%d,\"replica\":%d,\"since\":%" PRId64
			",\"why\":",
			k ? "," : "", h->attempt, h->replica, h->since_ms);
		put_json_str(b, h->why);
		gf_buf_puts(b, ",\"place\":");
		one_place_json(b, &h->place);
		gf_buf_putc(b, '}');
	}
	gf_buf_putc(b, ']');
	return gf_buf_error(b);
}

static void p_int(struct gf__params *p, int col, int64_t v)
{
	p->v[col] = (struct gf__param){ .kind = GF__P_INT, .i = v };
}

static void p_text(struct gf__params *p, int col, const char *s)
{
	p->v[col] = (struct gf__param){ .kind = GF__P_TEXT,
					.s = s,
					.len = strlen(s) };
}

int gf__store_job_params(const struct gf_job *j, struct gf__params *p,
			 struct gf_err *e)
{
	const struct gf_job_spec *s = &j->spec;
	p_int(p, GF__COL_SEQ, (int64_t)j->seq);
	p_text(p, GF__COL_ID, j->id);
	p_text(p, GF__COL_NAME, s->name);
	p_text(p, GF__COL_TEAM, s->team);
	p_text(p, GF__COL_CLASS, s->class_name);
	p_int(p, GF__COL_REPLICAS, s->replicas);
	p_int(p, GF__COL_GPUS, s->gpus);
	p_text(p, GF__COL_GPU_MODEL, s->gpu_model);
	p_int(p, GF__COL_GPU_MILLI, s->gpu_milli);
	p_text(p, GF__COL_MIG_PROFILE, s->mig_profile);
	p_int(p, GF__COL_CPU_MILLI, s->cpu_milli);
	p_int(p, GF__COL_MEMORY_MIB, s->memory_mib);
	p_text(p, GF__COL_NODE_SELECTOR, s->node_selector);
	p_int(p, GF__COL_MAX_RUNTIME_S, s->max_runtime_s);
	if (s->command)
		p_text(p, GF__COL_COMMAND, s->command);
	else
		p->v[GF__COL_COMMAND] =
			(struct gf__param){ .kind = GF__P_NULL };
	const char *paths[] = { s->output, s->error };
	for (int i = 0; i < 2; i++)
		if (paths[i])
			p_text(p, i ? GF__COL_ERROR : GF__COL_OUTPUT, paths[i]);
		else
			p->v[i ? GF__COL_ERROR : GF__COL_OUTPUT] =
				(struct gf__param){ .kind = GF__P_NULL };
	p_text(p, GF__COL_STATE, gf_job_state_name(j->state));
	p_text(p, GF__COL_REASON, j->reason);
	p_int(p, GF__COL_SUBMITTED_MS, j->submitted_ms);
	p_int(p, GF__COL_STARTED_MS, j->started_ms);
	p_int(p, GF__COL_ENDED_MS, j->ended_ms);
	p_int(p, GF__COL_ATTEMPTS, j->attempts);
	p_int(p, GF__COL_PREEMPTIONS, j->preemptions);
	p_int(p, GF__COL_FAILURES, j->failures);
	p_int(p, GF__COL_REQUEUES, j->requeues);
	p_int(p, GF__COL_EXIT_CODE, j->exit_code);
	p_int(p, GF__COL_BLOCK, j->block);
	p_int(p, GF__COL_GPU_MS, j->gpu_ms);
	p_text(p, GF__COL_SERVICE, s->service);
	p_text(p, GF__COL_ORIGIN, gf__store_origin_name(s->origin));
	p_text(p, GF__COL_ARRAY_JOB_ID, s->array_id);
	p_int(p, GF__COL_ARRAY_TASK_ID, s->array_task);
	p_int(p, GF__COL_ARRAY_MAX, s->array_max);
	p_text(p, GF__COL_DEPENDENCY, s->dependency);
	p_int(p, GF__COL_USER_HOLD, j->user_hold);
	if (s->env)
		p_text(p, GF__COL_ENV, s->env);
	else
		p->v[GF__COL_ENV] = (struct gf__param){ .kind = GF__P_NULL };
	p_text(p, GF__COL_WORKDIR, s->workdir);
	p_text(p, GF__COL_RUN_AS, s->user);
	p->v[GF__COL_PLACEMENT] = (struct gf__param){ .kind = GF__P_NULL };
	p->v[GF__COL_HELD] = (struct gf__param){ .kind = GF__P_NULL };
	if (j->nheld > 0) {
		if (held_json(j, &p->held) != 0)
			return gf_err_set(
				e, GF_ETOOBIG,
				"job %s: 'held': over %d bytes of JSON", j->id,
				GF_STORE_PLACEMENT_MAX);
		p->v[GF__COL_HELD] = (struct gf__param){
			.kind = GF__P_TEXT,
			.s = p->held.data,
			.len = p->held.len,
		};
	}
	if (j->place) {
		if (place_json(j, &p->placement) != 0) {
			char w[GF_JOB_ID_MAX + 40];
			who(j, w, sizeof(w));
			return gf_err_set(e, GF_ETOOBIG,
					  "%s: 'placement': over %d bytes of "
					  "JSON",
					  w, GF_STORE_PLACEMENT_MAX);
		}
		p->v[GF__COL_PLACEMENT] = (struct gf__param){
			.kind = GF__P_TEXT,
			.s = p->placement.data,
			.len = p->placement.len,
		};
	}
	return 0;
}
