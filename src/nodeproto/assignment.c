/*
 * assignment.c - the replicas a node should run (the answer to its long
 * poll), both ways.  A replica's placement (struct gf_job_place, the
 * core's value) is read and written by read_place and write_place only:
 * the keys "gpus" (index, with the node's UUID), "gpu_milli" and "mig"
 * (its start).
 */
#include <stdio.h>
#include <string.h>

#include "nodeproto/nodeproto.h"
#include "nodeproto/read.h"
#include "util/mem.h"

static int read_gpus(struct gf_np_rd *r, const struct gf_jv *v,
		     struct gf_np_assignment *a)
{
	int rc;
	const struct gf_jv *gpus =
		gf__np_arr(r, v, "gpus", true, GF_CNODE_MAX_GPUS, &rc);
	char saved[96];
	for (size_t i = 0; rc == 0 && i < gf_jv_len(gpus); i++) {
		const struct gf_jv *g = gf_jv_at(gpus, i);
		gf__np_enter(r, "gpus", i, saved, sizeof(saved));
		if (gf_jv_type(g) != GF_JV_OBJ)
			rc = gf__np_bad(r, "", "expected an object");
		if (rc == 0)
			rc = gf__np_int32(r, g, "index", true, 0,
					  GF_CNODE_MAX_GPUS - 1,
					  &a->place.gpus[i]);
		if (rc == 0)
			rc = gf__np_str(r, g, "uuid", false, a->uuids[i],
					sizeof(a->uuids[i]));
		gf__np_leave(r, saved);
		a->place.ngpus = (int)i + 1;
	}
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
	if ((rc = gf__np_str(r, m, "profile", true, a->mig_profile,
			     sizeof(a->mig_profile))) == 0 &&
	    (rc = gf__np_int32(r, m, "start", true, 0, 7,
			       &a->place.mig_start)) == 0)
		rc = gf__np_str(r, m, "uuid", false, a->mig_uuid,
				sizeof(a->mig_uuid));
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
	if ((rc = read_gpus(r, v, a)) ||
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
		gf_json_str(j, "profile", a->mig_profile);
		gf_json_int(j, "start", p->mig_start);
		gf_json_str(j, "uuid", a->mig_uuid);
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
	if ((rc = gf__np_int32(r, v, "world_size", false, 1,
			       GF_JOB_MAX_REPLICAS, &a->world_size)) ||
	    (rc = gf__np_int32(r, v, "rank", false, 0, GF_JOB_MAX_REPLICAS - 1,
			       &a->rank)) ||
	    (rc = gf__np_int32(r, v, "local_rank", false, 0,
			       GF_JOB_MAX_REPLICAS - 1, &a->local_rank)) ||
	    (rc = gf__np_int32(r, v, "local_world_size", false, 1,
			       GF_JOB_MAX_REPLICAS, &a->local_world_size)) ||
	    (rc = gf__np_str(r, v, "master_addr", false, a->master_addr,
			     sizeof(a->master_addr))) ||
	    (rc = gf__np_int32(r, v, "master_port", false, 0, 65535,
			       &a->master_port)))
		return rc;
	if (a->rank >= a->world_size || a->local_rank >= a->local_world_size)
		return gf__np_bad(r, "rank", "outside its world");
	if (a->world_size > 1 && (!a->master_addr[0] || a->master_port == 0))
		return gf__np_bad(r, "master_addr",
				  "a gang needs its master's address and port");
	return 0;
}

static int read_one(struct gf_np_rd *r, const struct gf_jv *v,
		    struct gf_np_assignment *a)
{
	int rc;
	memset(a, 0, sizeof(*a));
	if (gf_jv_type(v) != GF_JV_OBJ)
		return gf__np_bad(r, "", "expected an object");
	int64_t cpu = 0;
	if ((rc = gf__np_str(r, v, "job", true, a->ref.job,
			     sizeof(a->ref.job))) ||
	    (rc = gf__np_int32(r, v, "attempt", true, 1, INT32_MAX,
			       &a->ref.attempt)) ||
	    (rc = gf__np_int32(r, v, "replica", true, 0,
			       GF_JOB_MAX_REPLICAS - 1, &a->ref.replica)) ||
	    (rc = gf__np_str(r, v, "name", false, a->name, sizeof(a->name))) ||
	    (rc = gf__np_str(r, v, "team", false, a->team, sizeof(a->team))) ||
	    (rc = read_place(r, v, a)) ||
	    (rc = gf__np_int(r, v, "cpu_milli", false, 0, GF_JOB_CPU_MILLI_MAX,
			     &cpu)) ||
	    (rc = gf__np_int(r, v, "memory_mib", false, 0,
			     GF_JOB_MEMORY_MIB_MAX, &a->memory_mib)) ||
	    (rc = gf__np_int(r, v, "max_runtime_s", false, 0,
			     GF_JOB_RUNTIME_MAX_S, &a->max_runtime_s)) ||
	    (rc = read_gang(r, v, a)))
		return rc;
	a->cpu_milli = (int32_t)cpu;
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
	return 0;
}

static int read_layout(struct gf_np_rd *r, const struct gf_jv *v,
		       struct gf_np_mig_layout *l)
{
	int rc;
	memset(l, 0, sizeof(*l));
	if (gf_jv_type(v) != GF_JV_OBJ)
		return gf__np_bad(r, "", "expected an object");
	if ((rc = gf__np_int32(r, v, "gpu", true, 0, GF_CNODE_MAX_GPUS - 1,
			       &l->gpu)))
		return rc;
	const struct gf_jv *in = gf__np_arr(r, v, "instances", true, 8, &rc);
	char saved[96];
	for (size_t i = 0; rc == 0 && i < gf_jv_len(in); i++) {
		const struct gf_jv *x = gf_jv_at(in, i);
		gf__np_enter(r, "instances", i, saved, sizeof(saved));
		if (gf_jv_type(x) != GF_JV_OBJ)
			rc = gf__np_bad(r, "", "expected an object");
		if (rc == 0)
			rc = gf__np_str(r, x, "profile", true,
					l->inst[i].profile,
					sizeof(l->inst[i].profile));
		if (rc == 0)
			rc = gf__np_int32(r, x, "start", true, 0, 7,
					  &l->inst[i].start);
		gf__np_leave(r, saved);
		l->n = (int)i + 1;
	}
	return rc;
}

static int read_layouts(struct gf_np_rd *r, const struct gf_jv *v,
			struct gf_np_assignments *a)
{
	int rc;
	const struct gf_jv *arr =
		gf__np_arr(r, v, "mig_layouts", false, GF_CNODE_MAX_GPUS, &rc);
	char saved[96];
	for (size_t i = 0; rc == 0 && i < gf_jv_len(arr); i++) {
		gf__np_enter(r, "mig_layouts", i, saved, sizeof(saved));
		rc = read_layout(r, gf_jv_at(arr, i), &a->layouts[i]);
		gf__np_leave(r, saved);
		a->nlayouts = (int)i + 1;
	}
	return rc;
}

int gf_np_assignments_read(const struct gf_jv *v, struct gf_np_assignments *a,
			   struct gf_err *e)
{
	struct gf_np_rd r = { .e = e };
	int64_t gen = 0;
	int rc;
	memset(a, 0, sizeof(*a));
	if (gf_jv_type(v) != GF_JV_OBJ)
		return gf_err_set(e, GF_EINVAL, "expected a JSON object");
	if ((rc = gf__np_int(&r, v, "generation", true, 0, INT64_MAX, &gen)))
		return rc;
	a->generation = (uint64_t)gen;
	const struct gf_jv *arr =
		gf__np_arr(&r, v, "assignments", true, GF_NP_MAX_RUNNING, &rc);
	if (rc)
		return rc;
	if (gf_jv_len(arr))
		a->v = gf_calloc(gf_jv_len(arr), sizeof(*a->v));
	char saved[96];
	for (size_t i = 0; rc == 0 && i < gf_jv_len(arr); i++) {
		gf__np_enter(&r, "assignments", i, saved, sizeof(saved));
		rc = read_one(&r, gf_jv_at(arr, i), &a->v[i]);
		gf__np_leave(&r, saved);
		a->n = (int)i + 1;
	}
	if (rc == 0)
		rc = read_layouts(&r, v, a);
	if (rc)
		gf_np_assignments_release(a);
	return rc;
}

void gf_np_mig_layouts_write(struct gf_json *j,
			     const struct gf_np_mig_layout *l, int n)
{
	gf_json_arr_begin(j, "mig_layouts");
	for (int i = 0; i < n; i++) {
		gf_json_obj_begin(j, NULL);
		gf_json_int(j, "gpu", l[i].gpu);
		gf_json_arr_begin(j, "instances");
		for (int k = 0; k < l[i].n; k++) {
			gf_json_obj_begin(j, NULL);
			gf_json_str(j, "profile", l[i].inst[k].profile);
			gf_json_int(j, "start", l[i].inst[k].start);
			gf_json_obj_end(j);
		}
		gf_json_arr_end(j);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
}

void gf_np_assignments_release(struct gf_np_assignments *a)
{
	for (int i = 0; i < a->n; i++)
		gf_free(a->v[i].command);
	gf_free(a->v);
	a->v = NULL;
	a->n = 0;
}

void gf_np_assignment_write(struct gf_json *j, const struct gf_np_assignment *a)
{
	gf_json_obj_begin(j, NULL);
	gf_json_str(j, "job", a->ref.job);
	gf_json_int(j, "attempt", a->ref.attempt);
	gf_json_int(j, "replica", a->ref.replica);
	gf_json_str(j, "name", a->name);
	gf_json_str(j, "team", a->team);
	if (a->command)
		gf_json_str(j, "command", a->command);
	else
		gf_json_null(j, "command");
	write_place(j, a);
	gf_json_int(j, "cpu_milli", a->cpu_milli);
	gf_json_int(j, "memory_mib", a->memory_mib);
	gf_json_int(j, "max_runtime_s", a->max_runtime_s);
	gf_json_int(j, "world_size", a->world_size);
	gf_json_int(j, "rank", a->rank);
	gf_json_int(j, "local_rank", a->local_rank);
	gf_json_int(j, "local_world_size", a->local_world_size);
	gf_json_str(j, "master_addr", a->master_addr);
	gf_json_int(j, "master_port", a->master_port);
	gf_json_obj_end(j);
}
