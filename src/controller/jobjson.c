/*
 * jobjson.c - the API's job bodies and job objects.  Parsing is strict:
 * every key of the body is known, of its type, in its range; the first
 * problem found is the answer (a 400 naming the field).
 */
#include "controller/jobjson.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nodeproto/nodeproto.h"
#include "util/buf.h"
#include "util/fmt.h"
#include "util/mem.h"
#include "util/str.h"

static int bad(struct gf_err *e, const char *field, const char *what)
{
	return gf_err_set(e, GF_EINVAL, "'%s': %s", field, what);
}

static int str_field(const struct gf_jv *v, const char *field, char *out,
		     size_t size, struct gf_err *e)
{
	const char *s = gf_jv_str(v);
	if (s == NULL)
		return bad(e, field, "expected a string");
	if (strlen(s) >= size) {
		char what[64];
		gf_note(what, sizeof(what), "longer than %zu characters",
			size - 1);
		return bad(e, field, what);
	}
	memcpy(out, s, strlen(s) + 1); /* shorter than size: checked */
	return 0;
}

static int int_field(const struct gf_jv *v, const char *field, int64_t min,
		     int64_t max, int64_t *out, struct gf_err *e)
{
	int64_t x;
	if (!gf_jv_int(v, &x))
		return bad(e, field, "expected a whole number");
	if (x < min || x > max)
		return gf_err_set(
			e, GF_EINVAL, "'%s': expected %lld to %lld, got %lld",
			field, (long long)min, (long long)max, (long long)x);
	*out = x;
	return 0;
}

/* {"k": "v", ...} into "k=v,k=v". */
static int selector_field(const struct gf_jv *v, char *out, size_t size,
			  struct gf_err *e)
{
	if (gf_jv_type(v) != GF_JV_OBJ)
		return bad(e, "node_selector",
			   "expected an object of label: value");
	int rc = gf_jv_pairs(v, "=,", out, size);
	if (rc == GF_EINVAL)
		return bad(e, "node_selector",
			   "labels and values are strings without "
			   "'=' or ','");
	if (rc)
		return bad(e, "node_selector", "too long");
	return 0;
}

static int command_field(const struct gf_jv *v, struct gf_job_spec *s,
			 struct gf_err *e)
{
	if (gf_jv_type(v) == GF_JV_NULL)
		return 0;
	const char *c = gf_jv_str(v);
	if (c == NULL)
		return bad(e, "command",
			   "expected a string (a shell command "
			   "line)");
	if (strlen(c) >= GF_JOB_CMD_MAX)
		return bad(e, "command", "longer than 4095 bytes");
	s->command = gf_strdup(c);
	return 0;
}

/* "output" / "error": a path on the node with %j %r %a %n (core's
 * gf_job_path_check says what is refused). */
static int path_field(const char *k, const struct gf_jv *v, char **dst,
		      struct gf_err *e)
{
	if (gf_jv_type(v) == GF_JV_NULL)
		return 0;
	const char *c = gf_jv_str(v);
	if (c == NULL)
		return bad(e, k, "expected a string (a path on the node)");
	int rc = gf_job_path_check(k, c, e);
	if (rc == 0) {
		gf_free(*dst);
		*dst = gf_strdup(c);
	}
	return rc;
}

/* Arrays, dependencies, holds (issue 21; jobflow.h): "array" is read by
 * the submit (gf_jobjson_array: its tasks become jobs), "dependency"
 * normalized into the spec, "hold" a boolean.  1 when k is none of them. */
static int flow_field(const char *k, const struct gf_jv *v,
		      struct gf_job_spec *s, struct gf_err *e)
{
	if (!strcmp(k, "array")) {
		struct gf_array_spec a;
		if (gf_jv_str(v) == NULL)
			return bad(e, "array",
				   "expected a string such as \"0-31%4\"");
		return gf_array_parse(gf_jv_str(v), &a, e);
	}
	if (!strcmp(k, "dependency")) {
		struct gf_dep d[GF_DEP_IDS_MAX];
		int n;
		if (gf_jv_str(v) == NULL)
			return bad(e, "dependency",
				   "expected a string such as "
				   "\"afterok:j12\"");
		return gf_dep_parse(gf_jv_str(v), d, &n, s->dependency, e);
	}
	if (!strcmp(k, "hold"))
		return gf_jv_bool(v, &s->hold)
			       ? 0
			       : bad(e, "hold", "expected true or false");
	return 1;
}

int gf_jobjson_array(const struct gf_jv *body, struct gf_array_spec *out,
		     struct gf_err *e)
{
	const struct gf_jv *v = gf_jv_get(body, "array");
	if (v == NULL || gf_jv_type(v) == GF_JV_NULL)
		return 1;
	if (gf_jv_str(v) == NULL)
		return bad(e, "array", "expected a string such as \"0-31%4\"");
	return gf_array_parse(gf_jv_str(v), out, e);
}

/* {"NAME": "VALUE", ...}: names as a shell takes them, values strings,
 * within the caps; kept as compact JSON (issue 21). */
static int env_field(const struct gf_jv *v, struct gf_job_spec *s,
		     struct gf_err *e)
{
	if (gf_jv_type(v) != GF_JV_OBJ)
		return bad(e, "env", "expected an object of NAME: \"VALUE\"");
	if (gf_jv_len(v) > GF_JOB_ENV_MAX)
		return gf_err_set(e, GF_EINVAL,
				  "'env': %zu variables, more than %d",
				  gf_jv_len(v), GF_JOB_ENV_MAX);
	void *it = NULL;
	const struct gf_jv *x;
	const char *k;
	size_t bytes = 0;
	while ((k = gf_jv_next(v, &it, &x)) != NULL) {
		if (!gf_str_is_env_name(k, strlen(k)))
			return gf_err_set(e, GF_EINVAL,
					  "'env': '%.60s': expected a name of "
					  "letters, digits and '_', not "
					  "starting with a digit",
					  k);
		if (gf_jv_str(x) == NULL)
			return gf_err_set(e, GF_EINVAL,
					  "'env': '%.60s': expected a string",
					  k);
		if (gf_np_env_reserved(k))
			return gf_err_set(e, GF_EINVAL,
					  "'env': '%.60s' is set by the node "
					  "(the GPUs, the gang, GPUFLEET_*, "
					  "PWD): a job cannot set it",
					  k);
		bytes += strlen(k) + strlen(gf_jv_str(x)) + 2;
	}
	if (bytes > GF_JOB_ENV_BYTES)
		return gf_err_set(e, GF_EINVAL,
				  "'env': %zu bytes of NAME=VALUE, more than "
				  "%d",
				  bytes, GF_JOB_ENV_BYTES);
	if (gf_jv_len(v) == 0)
		return 0;
	struct gf_buf b;
	gf_buf_init(&b, 8 * GF_JOB_ENV_BYTES);
	int rc = gf_jv_dump(v, NULL, NULL, &b);
	if (rc == 0)
		s->env = gf_strdup(gf_buf_str(&b));
	gf_buf_release(&b);
	return rc ? bad(e, "env", "too long") : 0;
}

/* An absolute path, without NUL (the parser refuses those). */
static int workdir_field(const struct gf_jv *v, struct gf_job_spec *s,
			 struct gf_err *e)
{
	int rc = str_field(v, "workdir", s->workdir, sizeof(s->workdir), e);
	if (rc == 0 && s->workdir[0] != '/')
		return bad(e, "workdir", "expected an absolute path");
	return rc;
}

/* One key of the body into the spec. */
static int field(const char *k, const struct gf_jv *v, struct gf_job_spec *s,
		 struct gf_err *e)
{
	int64_t x = 0;
	int rc;
#define STR(name, dst)        \
	if (!strcmp(k, name)) \
		return str_field(v, name, dst, sizeof(dst), e);
#define INT(name, dst, lo, hi)                          \
	if (!strcmp(k, name)) {                         \
		rc = int_field(v, name, lo, hi, &x, e); \
		if (rc == 0)                            \
			dst = (__typeof__(dst))x;       \
		return rc;                              \
	}
	STR("name", s->name)
	STR("team", s->team)
	STR("class", s->class_name)
	STR("gpu_model", s->gpu_model)
	STR("mig_profile", s->mig_profile)
	INT("replicas", s->replicas, 1, GF_JOB_MAX_REPLICAS)
	INT("gpus", s->gpus, 0, GF_CNODE_MAX_GPUS)
	INT("gpu_milli", s->gpu_milli, 0, 1000000)
	INT("cpu_milli", s->cpu_milli, 0, 100000000)
	INT("memory_mib", s->memory_mib, 0, INT64_C(1) << 40)
	INT("max_runtime_s", s->max_runtime_s, 0, INT64_C(100) * 365 * 86400)
#undef STR
#undef INT
	if (!strcmp(k, "node_selector"))
		return selector_field(v, s->node_selector,
				      sizeof(s->node_selector), e);
	if (!strcmp(k, "command"))
		return command_field(v, s, e);
	if (!strcmp(k, "output"))
		return path_field(k, v, &s->output, e);
	if (!strcmp(k, "error"))
		return path_field(k, v, &s->error, e);
	if ((rc = flow_field(k, v, s, e)) <= 0)
		return rc;
	if (!strcmp(k, "env"))
		return env_field(v, s, e);
	if (!strcmp(k, "workdir"))
		return workdir_field(v, s, e);
	return gf_err_set(
		e, GF_EINVAL,
		"'%.60s': unknown field (known: name, team, class, "
		"replicas, gpus, gpu_model, gpu_milli, mig_profile, "
		"cpu_milli, memory_mib, node_selector, max_runtime_s, "
		"command, env, workdir, output, error, array, dependency, "
		"hold)",
		k);
}

int gf_jobjson_command_check(const struct gf_job_spec *s, struct gf_err *e)
{
	const char *c = s->command ? s->command : "";
	if (c[strspn(c, " \t\r\n")] != '\0')
		return 0;
	return bad(e, "command",
		   "required: the shell command line the job runs (only a "
		   "Kubernetes pod's job has none)");
}

int gf_jobjson_spec(const struct gf_jv *body, struct gf_job_spec *spec,
		    struct gf_err *e)
{
	memset(spec, 0, sizeof(*spec));
	memcpy(spec->team, "default", sizeof("default"));
	memcpy(spec->class_name, "batch", sizeof("batch"));
	spec->replicas = 1;
	spec->cpu_milli = 1000;
	spec->memory_mib = 1024;
	if (gf_jv_type(body) != GF_JV_OBJ)
		return gf_err_set(e, GF_EINVAL, "a job is a JSON object");
	void *it = NULL;
	const struct gf_jv *v;
	const char *k;
	while ((k = gf_jv_next(body, &it, &v)) != NULL) {
		/* null means "the default" for every field */
		if (gf_jv_type(v) == GF_JV_NULL)
			continue;
		int rc = field(k, v, spec, e);
		if (rc) {
			gf_job_spec_release(spec);
			return rc;
		}
	}
	return 0;
}

static void time_field(struct gf_json *j, const char *key, int64_t ms)
{
	if (ms <= 0) {
		gf_json_null(j, key);
		return;
	}
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char buf[96];
	gmtime_r(&t, &tm);
	gf_note(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
		tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		tm.tm_min, tm.tm_sec, (int)(ms % 1000));
	gf_json_str(j, key, buf);
}

/* A finished job's placement: its last run's replicas, as they ran. */
static void last_placement(struct gf_json *j, const struct gf_job *job,
			   const struct gf_job_run *runs, int nruns)
{
	int last = 0;
	for (int k = 0; k < nruns; k++)
		if (runs[k].attempt > last)
			last = runs[k].attempt;
	const struct gf_job_spec *s = &job->spec;
	for (int k = 0; k < nruns; k++) {
		const struct gf_job_run *r = &runs[k];
		if (r->attempt != last)
			continue;
		gf_json_obj_begin(j, NULL);
		gf_json_str(j, "node", r->node);
		gf_json_arr_begin(j, "gpus");
		for (int g = 0; g < r->ngpus; g++)
			gf_json_int(j, NULL, r->gpus[g]);
		gf_json_arr_end(j);
		gf_json_int(j, "gpu_milli",
			    s->gpus		? 1000
			    : s->mig_profile[0] ? 0
						: s->gpu_milli);
		gf_json_str_or_null(j, "mig_profile", s->mig_profile);
		if (r->mig_start >= 0 && s->mig_profile[0])
			gf_json_int(j, "mig_start", r->mig_start);
		gf_json_null(j, "block");
		gf_json_obj_end(j);
	}
}

static void placement(struct gf_json *j, const struct gf_job *job,
		      const struct gf_ctl_config *cfg,
		      const struct gf_job_run *runs, int nruns)
{
	gf_json_arr_begin(j, "placement");
	if (!job->place && gf_job_is_final(job->state))
		last_placement(j, job, runs, nruns);
	for (int i = 0; job->place && i < job->spec.replicas; i++) {
		const struct gf_job_place *p = &job->place[i];
		gf_json_obj_begin(j, NULL);
		gf_json_str(j, "node", p->node_name);
		gf_json_arr_begin(j, "gpus");
		for (int g = 0; g < p->ngpus; g++)
			gf_json_int(j, NULL, p->gpus[g]);
		gf_json_arr_end(j);
		gf_json_int(j, "gpu_milli", p->gpu_milli);
		gf_json_str_or_null(j, "mig_profile", job->spec.mig_profile);
		if (p->mig_start >= 0 && job->spec.mig_profile[0])
			gf_json_int(j, "mig_start", p->mig_start);
		gf_json_str_or_null(j, "block",
				    cfg && job->block >= 0 &&
						    job->block < cfg->nblocks
					    ? cfg->blocks[job->block]
					    : NULL);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
}

/* Replicas of earlier runs whose processes may still live: their
 * resources stay taken until their node says they are gone. */
static void completing(struct gf_json *j, const struct gf_job *job)
{
	gf_json_arr_begin(j, "completing");
	for (int k = 0; k < job->nheld; k++) {
		const struct gf_job_held *h = &job->held[k];
		gf_json_obj_begin(j, NULL);
		gf_json_int(j, "attempt", h->attempt);
		gf_json_int(j, "replica", h->replica);
		gf_json_str(j, "node", h->place.node_name);
		gf_json_arr_begin(j, "gpus");
		for (int g = 0; g < h->place.ngpus; g++)
			gf_json_int(j, NULL, h->place.gpus[g]);
		gf_json_arr_end(j);
		gf_json_str(j, "why", h->why);
		time_field(j, "since", h->since_ms);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
}

/* A UUID list "a,b" as ["a", "b"]. */
static void uuid_list(struct gf_json *j, const char *list)
{
	gf_json_arr_begin(j, "gpu_uuids");
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		char one[GF_JOB_RUN_UUID_MAX];
		gf_note(one, sizeof(one), "%.*s", (int)n, p);
		gf_json_str(j, NULL, one);
		p += n + (p[n] == ',');
	}
	gf_json_arr_end(j);
}

static void runs_list(struct gf_json *j, const struct gf_job_run *runs,
		      int nruns)
{
	gf_json_arr_begin(j, "runs");
	for (int k = 0; k < nruns; k++) {
		const struct gf_job_run *r = &runs[k];
		gf_json_obj_begin(j, NULL);
		gf_json_int(j, "attempt", r->attempt);
		gf_json_int(j, "replica", r->replica);
		gf_json_str(j, "node", r->node);
		gf_json_arr_begin(j, "gpus");
		for (int g = 0; g < r->ngpus; g++)
			gf_json_int(j, NULL, r->gpus[g]);
		gf_json_arr_end(j);
		uuid_list(j, r->gpu_uuids);
		gf_json_str_or_null(j, "mig_uuid", r->mig_uuid);
		time_field(j, "started", r->started_ms);
		time_field(j, "ended", r->ended_ms);
		if (r->ended_ms > 0)
			gf_json_int(j, "exit_code", r->exit_code);
		else
			gf_json_null(j, "exit_code");
		gf_json_str_or_null(j, "reason", r->reason);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
}

void gf_jobjson_write(struct gf_json *j, const char *key,
		      const struct gf_job *job, const struct gf_ctl_config *cfg,
		      const struct gf_job_run *runs, int nruns)
{
	const struct gf_job_spec *s = &job->spec;
	gf_json_obj_begin(j, key);
	gf_json_str(j, "id", job->id);
	gf_json_str(j, "name", s->name);
	gf_json_str(j, "state", gf_job_state_name(job->state));
	gf_json_str(j, "team", s->team);
	gf_json_str(j, "class", s->class_name);
	gf_json_int(j, "replicas", s->replicas);
	gf_json_int(j, "gpus", s->gpus);
	gf_json_str_or_null(j, "gpu_model", s->gpu_model);
	gf_json_int(j, "gpu_milli", s->gpu_milli);
	gf_json_str_or_null(j, "mig_profile", s->mig_profile);
	gf_json_int(j, "cpu_milli", s->cpu_milli);
	gf_json_int(j, "memory_mib", s->memory_mib);
	gf_json_kv(j, "node_selector", s->node_selector);
	gf_json_int(j, "max_runtime_s", s->max_runtime_s);
	gf_json_str_or_null(j, "command", s->command);
	gf_json_str_or_null(j, "output", s->output);
	gf_json_str_or_null(j, "error", s->error);
	/* environment, directory, user (issue 21) */
	if (s->env) {
		gf_json_raw(j, "env", s->env, strlen(s->env));
	} else {
		gf_json_obj_begin(j, "env");
		gf_json_obj_end(j);
	}
	gf_json_str_or_null(j, "workdir", s->workdir);
	gf_json_str_or_null(j, "user", s->user);
	gf_json_str_or_null(j, "reason", job->reason);
	time_field(j, "submitted", job->submitted_ms);
	time_field(j, "started", job->started_ms);
	time_field(j, "ended", job->ended_ms);
	/* runs started; of their ends, the job's own failures, the
	 * infrastructure's requeues, preemptions (issue 19); each replica's
	 * run in "runs" (issue 21: before, "runs" was this count) */
	gf_json_int(j, "attempts", job->attempts);
	gf_json_int(j, "failures", job->failures);
	gf_json_int(j, "requeues", job->requeues);
	gf_json_int(j, "preemptions", job->preemptions);
	if (job->state == GF_JOB_SUCCEEDED || job->state == GF_JOB_FAILED)
		gf_json_int(j, "exit_code", job->exit_code);
	else
		gf_json_null(j, "exit_code");
	gf_json_str_or_null(j, "service", s->service);
	/* GPU time its runs used, as the nodes reported it */
	gf_json_double(j, "gpu_seconds", (double)job->gpu_ms / 1000.0);
	placement(j, job, cfg, runs, nruns);
	completing(j, job);
	runs_list(j, runs, nruns);
	/* arrays, dependencies, holds (issue 21) */
	gf_json_str_or_null(j, "array_job_id", s->array_id);
	if (s->array_id[0]) {
		gf_json_int(j, "array_task_id", s->array_task);
		gf_json_int(j, "array_max", s->array_max);
	} else {
		gf_json_null(j, "array_task_id");
		gf_json_null(j, "array_max");
	}
	gf_json_str_or_null(j, "dependency", s->dependency);
	gf_json_bool(j, "hold", job->user_hold);
	gf_json_obj_end(j);
}
