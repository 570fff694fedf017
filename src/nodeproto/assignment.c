/*
 * assignment.c - the replicas a node should run (the answer to its long
 * poll), both ways.  A replica's placement (struct gf_job_place, the
 * core's value) is read and written by read_place and write_place only:
 * the keys "gpus" (index, with the node's UUID), "gpu_milli" and "mig"
 * (its start).
 */
#include <stdio.h>
#include <string.h>

#include <gpufleet/jobflow.h>

#include "nodeproto/nodeproto.h"
#include "nodeproto/read.h"
#include "util/buf.h"
#include "util/mem.h"
#include "util/str.h"

#define A struct gf_np_assignment
static const struct gf__np_field who_fields[] = {
	GF__NP_STR(A, "name", false, name),
	GF__NP_STR(A, "team", false, team),
	{ 0 },
};

/* "mig": {"profile", "start", "uuid"} of the replica's instance */
static const struct gf__np_field mig_fields[] = {
	GF__NP_STR(A, "profile", true, mig_profile),
	GF__NP_INT(A, "start", true, place.mig_start, 0, 7),
	GF__NP_STR(A, "uuid", false, mig_uuid),
	{ 0 },
};

static const struct gf__np_field size_fields[] = {
	GF__NP_INT(A, "cpu_milli", false, cpu_milli, 0, GF_JOB_CPU_MILLI_MAX),
	GF__NP_INT(A, "memory_mib", false, memory_mib, 0,
		   GF_JOB_MEMORY_MIB_MAX),
	GF__NP_INT(A, "max_runtime_s", false, max_runtime_s, 0,
		   GF_JOB_RUNTIME_MAX_S),
	{ 0 },
};

/* a gang's place in it: torchrun's variables */
static const struct gf__np_field gang_fields[] = {
	GF__NP_INT(A, "world_size", false, world_size, 1, GF_JOB_MAX_REPLICAS),
	GF__NP_INT(A, "rank", false, rank, 0, GF_JOB_MAX_REPLICAS - 1),
	GF__NP_INT(A, "local_rank", false, local_rank, 0,
		   GF_JOB_MAX_REPLICAS - 1),
	GF__NP_INT(A, "local_world_size", false, local_world_size, 1,
		   GF_JOB_MAX_REPLICAS),
	GF__NP_STR(A, "master_addr", false, master_addr),
	GF__NP_INT(A, "master_port", false, master_port, 0, 65535),
	{ 0 },
};
/* an array's task: its array, its index (issue 21; absent: none) */
static const struct gf__np_field array_fields[] = {
	GF__NP_STR(A, "array_job_id", false, array_job),
	GF__NP_INT(A, "array_task_id", false, array_task, 0,
		   GF_ARRAY_INDEX_MAX),
	{ 0 },
};

/* issue 21: the job's directory and user, whether root is refused */
static const struct gf__np_field run_as_fields[] = {
	GF__NP_STR(A, "workdir", false, workdir),
	GF__NP_STR(A, "user", false, user),
	GF__NP_BOOL(A, "refuse_root", false, refuse_root),
	{ 0 },
};
#undef A

bool gf_np_env_reserved(const char *name)
{
	static const char *const names[] = {
		"CUDA_VISIBLE_DEVICES",
		"CUDA_DEVICE_ORDER",
		"ROCR_VISIBLE_DEVICES",
		"WORLD_SIZE",
		"RANK",
		"LOCAL_RANK",
		"MASTER_ADDR",
		"MASTER_PORT",
		"PWD",
		"SLURM_ARRAY_JOB_ID", /* an array task's (issue 21) */
		"SLURM_ARRAY_TASK_ID",
	};
	if (strncmp(name, "GPUFLEET_", 9) == 0)
		return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* "env": {"NAME": "VALUE"} or null, names and sizes as the API checks
 * them, kept as compact JSON. */
static int read_env(struct gf_np_rd *r, const struct gf_jv *v,
		    struct gf_np_assignment *a)
{
	int rc;
	const struct gf_jv *env = gf__np_get(r, v, "env", false, &rc);
	if (env == NULL || gf_jv_type(env) == GF_JV_NULL)
		return rc;
	if (gf_jv_type(env) != GF_JV_OBJ || gf_jv_len(env) > GF_JOB_ENV_MAX)
		return gf__np_bad(r, "env",
				  "expected an object of at most %d "
				  "NAME: \"VALUE\"",
				  GF_JOB_ENV_MAX);
	void *it = NULL;
	const struct gf_jv *x;
	const char *k;
	size_t bytes = 0;
	while ((k = gf_jv_next(env, &it, &x)) != NULL) {
		if (!gf_str_is_env_name(k, strlen(k)) || !gf_jv_str(x) ||
		    gf_np_env_reserved(k))
			return gf__np_bad(r, "env",
					  "'%.60s': not a variable a "
					  "job may set",
					  k);
		bytes += strlen(k) + strlen(gf_jv_str(x)) + 2;
	}
	if (bytes > GF_JOB_ENV_BYTES)
		return gf__np_bad(r, "env", "more than %d bytes",
				  GF_JOB_ENV_BYTES);
	struct gf_buf b;
	gf_buf_init(&b, 8 * GF_JOB_ENV_BYTES);
	rc = gf_jv_dump(env, NULL, NULL, &b);
	if (rc == 0)
		a->env = gf_strdup(gf_buf_str(&b));
	gf_buf_release(&b);
	return rc ? gf__np_bad(r, "env", "too long") : 0;
}

static const struct gf__np_field gen_fields[] = {
	GF__NP_UINT(struct gf_np_assignments, "generation", true, generation),
	{ 0 },
};

static const struct gf__np_field inst_fields[] = {
	GF__NP_STR(struct gf_np_mig_inst, "profile", true, profile),
	GF__NP_INT(struct gf_np_mig_inst, "start", true, start, 0, 7),
	{ 0 },
};

/* Element i of "gpus" of the assignment ctx: {"index", "uuid"}. */
static int read_gpu_at(struct gf_np_rd *r, const struct gf_jv *g, size_t i,
		       void *ctx)
{
	struct gf_np_assignment *a = ctx;
	int rc = gf__np_obj(r, g);
	if (rc == 0)
		rc = gf__np_int32(r, g, "index", true, 0, GF_CNODE_MAX_GPUS - 1,
				  &a->place.gpus[i]);
	if (rc == 0)
		rc = gf__np_str(r, g, "uuid", false, a->uuids[i],
				sizeof(a->uuids[i]));
	return rc;
}

static int read_mig(struct gf_np_rd *r, const struct gf_jv *v,
		    struct gf_np_assignment *a)
{
	int rc;
	const struct gf_jv *m = gf__np_get(r, v, "mig", false, &rc);
	if (m == NULL || gf_jv_type(m) == GF_JV_NULL)
		return rc;
	if (gf_jv_type(m) != GF_JV_OBJ)
		return gf__np_bad(r, "mig", "expected an object or null");
	char saved[96];
	gf__np_push(r, "mig", saved, sizeof(saved));
	a->mig = true;
	rc = gf__np_fields_read(r, m, mig_fields, a);
	gf__np_leave(r, saved);
	if (rc == 0 && a->place.ngpus != 1)
		rc = gf__np_bad(r, "mig", "a MIG instance is on one GPU");
	return rc;
}

static int read_place(struct gf_np_rd *r, const struct gf_jv *v,
		      struct gf_np_assignment *a)
{
	int rc;
	a->place.node = -1; /* not sent: the node reading it */
	a->place.mig_start = -1;
	if ((rc = gf__np_each(r, v, "gpus", true, GF_CNODE_MAX_GPUS,
			      read_gpu_at, a, &a->place.ngpus)) ||
	    (rc = gf__np_int32(r, v, "gpu_milli", false, 0, 1000,
			       &a->place.gpu_milli)))
		return rc;
	return read_mig(r, v, a);
}

static void write_place(struct gf_json *j, const struct gf_np_assignment *a)
{
	const struct gf_job_place *p = &a->place;
	gf_json_arr_begin(j, "gpus");
	for (int g = 0; g < p->ngpus; g++) {
		gf_json_obj_begin(j, NULL);
		gf_json_int(j, "index", p->gpus[g]);
		gf_json_str(j, "uuid", a->uuids[g]);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
	gf_json_int(j, "gpu_milli", p->gpu_milli);
	if (a->mig) {
		gf_json_obj_begin(j, "mig");
		gf__np_fields_write(j, mig_fields, a);
		gf_json_obj_end(j);
	} else {
		gf_json_null(j, "mig");
	}
}

static int read_gang(struct gf_np_rd *r, const struct gf_jv *v,
		     struct gf_np_assignment *a)
{
	int rc;
	a->world_size = 1;
	a->local_world_size = 1;
	if ((rc = gf__np_fields_read(r, v, gang_fields, a)))
		return rc;
	if (a->rank >= a->world_size || a->local_rank >= a->local_world_size)
		return gf__np_bad(r, "rank", "outside its world");
	if (a->world_size > 1 && (!a->master_addr[0] || a->master_port == 0))
		return gf__np_bad(r, "master_addr",
				  "a gang needs its master's address and port");
	return 0;
}

/* Element i of "assignments": the array ctx of struct gf_np_assignment. */
/* An optional path member ("output", "error"): NULL or a copy. */
static int read_path(struct gf_np_rd *r, const struct gf_jv *v, const char *key,
		     char **out)
{
	const struct gf_jv *p = gf_jv_get(v, key);
	if (!p || gf_jv_type(p) == GF_JV_NULL)
		return 0;
	const char *c = gf_jv_str(p);
	if (c == NULL)
		return gf__np_bad(r, key, "expected a string");
	if (strlen(c) >= GF_JOB_PATH_MAX)
		return gf__np_bad(r, key, "longer than %d bytes",
				  GF_JOB_PATH_MAX - 1);
	*out = gf_strdup(c);
	return 0;
}

static int read_one_at(struct gf_np_rd *r, const struct gf_jv *v, size_t i,
		       void *ctx)
{
	struct gf_np_assignment *a = (struct gf_np_assignment *)ctx + i;
	int rc;
	memset(a, 0, sizeof(*a));
	if ((rc = gf__np_obj(r, v)) ||
	    (rc = gf__np_fields_read(r, v, gf__np_ref_fields, &a->ref)) ||
	    (rc = gf__np_fields_read(r, v, who_fields, a)) ||
	    (rc = read_place(r, v, a)) ||
	    (rc = gf__np_fields_read(r, v, size_fields, a)) ||
	    (rc = read_gang(r, v, a)) ||
	    (rc = gf__np_fields_read(r, v, array_fields, a)) ||
	    (rc = gf__np_fields_read(r, v, run_as_fields, a)) ||
	    (rc = read_env(r, v, a)))
		return rc;
	if (a->workdir[0] && a->workdir[0] != '/')
		return gf__np_bad(r, "workdir", "expected an absolute path");
	if (a->user[0] && !gf_str_is_login(a->user))
		return gf__np_bad(r, "user", "expected a login name");
	const struct gf_jv *cmd = gf_jv_get(v, "command");
	if (cmd && gf_jv_type(cmd) != GF_JV_NULL) {
		const char *c = gf_jv_str(cmd);
		if (c == NULL)
			return gf__np_bad(r, "command", "expected a string");
		if (strlen(c) >= GF_JOB_CMD_MAX)
			return gf__np_bad(r, "command", "longer than %d bytes",
					  GF_JOB_CMD_MAX - 1);
		a->command = gf_strdup(c);
	}
	if ((rc = read_path(r, v, "output", &a->output)) ||
	    (rc = read_path(r, v, "error", &a->error)))
		return rc;
	return 0;
}

/* Element i of "instances" of the struct gf_np_mig_layout ctx. */
static int read_inst_at(struct gf_np_rd *r, const struct gf_jv *v, size_t i,
			void *ctx)
{
	int rc = gf__np_obj(r, v);
	return rc ? rc
		  : gf__np_fields_read(
			    r, v, inst_fields,
			    &((struct gf_np_mig_layout *)ctx)->inst[i]);
}

/* Element i of "mig_layouts": the array ctx of struct gf_np_mig_layout. */
static int read_layout_at(struct gf_np_rd *r, const struct gf_jv *v, size_t i,
			  void *ctx)
{
	struct gf_np_mig_layout *l = (struct gf_np_mig_layout *)ctx + i;
	int rc;
	memset(l, 0, sizeof(*l));
	if ((rc = gf__np_obj(r, v)) ||
	    (rc = gf__np_int32(r, v, "gpu", true, 0, GF_CNODE_MAX_GPUS - 1,
			       &l->gpu)))
		return rc;
	return gf__np_each(r, v, "instances", true, 8, read_inst_at, l, &l->n);
}

/* After the generation: the assignments, the MIG layouts. */
static int read_lists(struct gf_np_rd *r, const struct gf_jv *v, void *out)
{
	struct gf_np_assignments *a = out;
	int rc;
	if ((rc = gf__np_each_new(r, v, "assignments", true, GF_NP_MAX_RUNNING,
				  sizeof(*a->v), &a->v, read_one_at, &a->n)) ||
	    (rc = gf__np_each(r, v, "mig_layouts", false, GF_CNODE_MAX_GPUS,
			      read_layout_at, a->layouts, &a->nlayouts)))
		gf_np_assignments_release(a);
	return rc;
}

int gf_np_assignments_read(const struct gf_jv *v, struct gf_np_assignments *a,
			   struct gf_err *e)
{
	return gf__np_doc(v, a, sizeof(*a), gen_fields, read_lists, e);
}

void gf_np_mig_layouts_write(struct gf_json *j,
			     const struct gf_np_mig_layout *l, int n)
{
	gf_json_arr_begin(j, "mig_layouts");
	for (int i = 0; i < n; i++) {
		gf_json_obj_begin(j, NULL);
		gf_json_int(j, "gpu", l[i].gpu);
		gf__np_list_write(j, "instances", inst_fields, l[i].inst,
				  sizeof(l[i].inst[0]), l[i].n);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
}

void gf_np_assignments_release(struct gf_np_assignments *a)
{
	for (int i = 0; i < a->n; i++) {
		gf_free(a->v[i].command);
		gf_free(a->v[i].output);
		gf_free(a->v[i].error);
		gf_free(a->v[i].env);
	}
	gf_free(a->v);
	a->v = NULL;
	a->n = 0;
}

void gf_np_assignment_write(struct gf_json *j, const struct gf_np_assignment *a)
{
	gf_json_obj_begin(j, NULL);
	gf__np_fields_write(j, gf__np_ref_fields, &a->ref);
	gf__np_fields_write(j, who_fields, a);
	if (a->command)
		gf_json_str(j, "command", a->command);
	else
		gf_json_null(j, "command");
	if (a->output) /* only when set: older agents take no such key */
		gf_json_str(j, "output", a->output);
	if (a->error)
		gf_json_str(j, "error", a->error);
	write_place(j, a);
	gf__np_fields_write(j, size_fields, a);
	gf__np_fields_write(j, gang_fields, a);
	if (a->array_job[0])
		gf__np_fields_write(j, array_fields, a);
	gf__np_fields_write(j, run_as_fields, a);
	if (a->env)
		gf_json_raw(j, "env", a->env, strlen(a->env));
	else
		gf_json_null(j, "env");
	gf_json_obj_end(j);
}
