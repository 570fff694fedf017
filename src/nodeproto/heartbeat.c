/*
 * heartbeat.c - a node's heartbeat (its GPUs' health, the replicas it
 * runs, the runs that ended) and the controller's acknowledgement, both
 * ways.
 */
#include <stdio.h>
#include <string.h>

#include "nodeproto/nodeproto.h"
#include "nodeproto/read.h"
#include "util/mem.h"

static int read_ref(struct gf_np_rd *r, const struct gf_jv *v,
		    struct gf_np_ref *ref)
{
	int rc;
	memset(ref, 0, sizeof(*ref));
	if (gf_jv_type(v) != GF_JV_OBJ)
		return gf__np_bad(r, "", "expected an object");
	if ((rc = gf__np_str(r, v, "job", true, ref->job, sizeof(ref->job))) ||
	    (rc = gf__np_int32(r, v, "attempt", true, 1, INT32_MAX,
			       &ref->attempt)) ||
	    (rc = gf__np_int32(r, v, "replica", true, 0,
			       GF_JOB_MAX_REPLICAS - 1, &ref->replica)))
		return rc;
	return 0;
}

static int read_report(struct gf_np_rd *r, const struct gf_jv *v,
		       struct gf_np_report *rep)
{
	struct gf_job_run *run = &rep->run;
	int rc = read_ref(r, v, &rep->ref);
	memset(run, 0, sizeof(*run));
	if (rc ||
	    (rc = gf__np_int(r, v, "started_ms", true, 1, INT64_MAX,
			     &run->started_ms)) ||
	    (rc = gf__np_int(r, v, "ended_ms", true, 1, INT64_MAX,
			     &run->ended_ms)) ||
	    (rc = gf__np_int32(r, v, "exit_code", true, -1, 255 + 128,
			       &run->exit_code)) ||
	    (rc = gf__np_int(r, v, "gpu_ms", true, 0, INT64_MAX,
			     &run->gpu_ms)) ||
	    (rc = gf__np_str(r, v, "reason", false, run->reason,
			     sizeof(run->reason))))
		return rc;
	if (run->ended_ms < run->started_ms)
		return gf__np_bad(r, "ended_ms", "before started_ms");
	run->attempt = rep->ref.attempt;
	run->replica = rep->ref.replica;
	return 0;
}

static int read_health(struct gf_np_rd *r, const struct gf_jv *obj,
		       struct gf_np_heartbeat *hb)
{
	int rc;
	const struct gf_jv *gpus =
		gf__np_arr(r, obj, "health", false, GF_CNODE_MAX_GPUS, &rc);
	char saved[96];
	for (size_t i = 0; rc == 0 && i < gf_jv_len(gpus); i++) {
		const struct gf_jv *g = gf_jv_at(gpus, i);
		gf__np_enter(r, "health", i, saved, sizeof(saved));
		hb->health[i].healthy = true;
		hb->health[i].reason[0] = '\0';
		if (gf_jv_type(g) != GF_JV_OBJ)
			rc = gf__np_bad(r, "", "expected an object");
		if (rc == 0)
			rc = gf__np_int32(r, g, "index", true, 0,
					  GF_CNODE_MAX_GPUS - 1,
					  &hb->health[i].index);
		if (rc == 0)
			rc = gf__np_bool(r, g, "healthy", false,
					 &hb->health[i].healthy);
		if (rc == 0)
			rc = gf__np_str(r, g, "reason", false,
					hb->health[i].reason,
					sizeof(hb->health[i].reason));
		gf__np_leave(r, saved);
		hb->nhealth = (int)i + 1;
	}
	return rc;
}

/* "gpu_pods": [{"uuid": "GPU-...", "pods": ["UID", ...]}, ...] */
static int read_gpu_pods(struct gf_np_rd *r, const struct gf_jv *obj,
			 struct gf_np_heartbeat *hb)
{
	int rc;
	const struct gf_jv *a =
		gf__np_arr(r, obj, "gpu_pods", false, GF_NP_MAX_GPU_PODS, &rc);
	if (rc || !gf_jv_len(a))
		return rc;
	hb->gpu_pods = gf_calloc(gf_jv_len(a), sizeof(*hb->gpu_pods));
	char saved[96], saved2[96];
	for (size_t i = 0; rc == 0 && i < gf_jv_len(a); i++) {
		const struct gf_jv *g = gf_jv_at(a, i);
		struct gf_np_gpu_pods *gp = &hb->gpu_pods[i];
		hb->ngpu_pods = (int)i + 1;
		gf__np_enter(r, "gpu_pods", i, saved, sizeof(saved));
		if (gf_jv_type(g) != GF_JV_OBJ)
			rc = gf__np_bad(r, "", "expected an object");
		if (rc == 0)
			rc = gf__np_str(r, g, "uuid", true, gp->uuid,
					sizeof(gp->uuid));
		if (rc == 0 && !gp->uuid[0])
			rc = gf__np_bad(r, "uuid", "empty");
		const struct gf_jv *pods =
			rc ? NULL
			   : gf__np_arr(r, g, "pods", true, GF_NP_PODS_PER_GPU,
					&rc);
		for (size_t k = 0; rc == 0 && k < gf_jv_len(pods); k++) {
			const char *uid = gf_jv_str(gf_jv_at(pods, k));
			gf__np_enter(r, "pods", k, saved2, sizeof(saved2));
			if (uid == NULL)
				rc = gf__np_bad(r, "", "expected a string");
			else if (!uid[0])
				rc = gf__np_bad(r, "", "empty");
			else if (strlen(uid) >= GF_NP_POD_UID_MAX)
				rc = gf__np_bad(r, "", "longer than %d bytes",
						GF_NP_POD_UID_MAX - 1);
			else
				memcpy(gp->pods[k], uid, strlen(uid) + 1);
			gf__np_leave(r, saved2);
			gp->npods = (int)k + 1;
		}
		gf__np_leave(r, saved);
	}
	return rc;
}

int gf_np_heartbeat_read(const struct gf_jv *v, struct gf_np_heartbeat *hb,
			 struct gf_err *e)
{
	struct gf_np_rd r = { .e = e };
	int64_t gen = 0;
	int rc;
	memset(hb, 0, sizeof(*hb));
	if (gf_jv_type(v) != GF_JV_OBJ)
		return gf_err_set(e, GF_EINVAL, "expected a JSON object");
	if ((rc = gf__np_int(&r, v, "generation", false, 0, INT64_MAX, &gen)) ||
	    (rc = read_health(&r, v, hb)))
		return rc;
	hb->generation = (uint64_t)gen;
	const struct gf_jv *run =
		gf__np_arr(&r, v, "running", false, GF_NP_MAX_RUNNING, &rc);
	const struct gf_jv *rep = rc ? NULL
				     : gf__np_arr(&r, v, "reports", false,
						  GF_NP_MAX_REPORTS, &rc);
	if (rc)
		return rc;
	char saved[96];
	if (gf_jv_len(run))
		hb->running = gf_calloc(gf_jv_len(run), sizeof(*hb->running));
	for (size_t i = 0; rc == 0 && i < gf_jv_len(run); i++) {
		gf__np_enter(&r, "running", i, saved, sizeof(saved));
		rc = read_ref(&r, gf_jv_at(run, i), &hb->running[i]);
		gf__np_leave(&r, saved);
		hb->nrunning = (int)i + 1;
	}
	if (rc == 0 && gf_jv_len(rep))
		hb->reports = gf_calloc(gf_jv_len(rep), sizeof(*hb->reports));
	for (size_t i = 0; rc == 0 && i < gf_jv_len(rep); i++) {
		gf__np_enter(&r, "reports", i, saved, sizeof(saved));
		rc = read_report(&r, gf_jv_at(rep, i), &hb->reports[i]);
		gf__np_leave(&r, saved);
		hb->nreports = (int)i + 1;
	}
	if (rc == 0)
		rc = read_gpu_pods(&r, v, hb);
	if (rc)
		gf_np_heartbeat_release(hb);
	return rc;
}

void gf_np_heartbeat_release(struct gf_np_heartbeat *hb)
{
	gf_free(hb->running);
	gf_free(hb->reports);
	gf_free(hb->gpu_pods);
	hb->running = NULL;
	hb->reports = NULL;
	hb->gpu_pods = NULL;
	hb->nrunning = hb->nreports = hb->ngpu_pods = 0;
}

static void write_ref(struct gf_json *j, const struct gf_np_ref *ref)
{
	gf_json_str(j, "job", ref->job);
	gf_json_int(j, "attempt", ref->attempt);
	gf_json_int(j, "replica", ref->replica);
}

void gf_np_heartbeat_write(struct gf_json *j, const struct gf_np_heartbeat *hb)
{
	gf_json_uint(j, "generation", hb->generation);
	gf_json_arr_begin(j, "health");
	for (int i = 0; i < hb->nhealth; i++) {
		gf_json_obj_begin(j, NULL);
		gf_json_int(j, "index", hb->health[i].index);
		gf_json_bool(j, "healthy", hb->health[i].healthy);
		gf_json_str(j, "reason", hb->health[i].reason);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
	gf_json_arr_begin(j, "running");
	for (int i = 0; i < hb->nrunning; i++) {
		gf_json_obj_begin(j, NULL);
		write_ref(j, &hb->running[i]);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
	gf_json_arr_begin(j, "reports");
	for (int i = 0; i < hb->nreports; i++) {
		const struct gf_job_run *run = &hb->reports[i].run;
		gf_json_obj_begin(j, NULL);
		write_ref(j, &hb->reports[i].ref);
		gf_json_int(j, "started_ms", run->started_ms);
		gf_json_int(j, "ended_ms", run->ended_ms);
		gf_json_int(j, "exit_code", run->exit_code);
		gf_json_int(j, "gpu_ms", run->gpu_ms);
		gf_json_str(j, "reason", run->reason);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
	gf_json_arr_begin(j, "gpu_pods");
	for (int i = 0; i < hb->ngpu_pods; i++) {
		const struct gf_np_gpu_pods *gp = &hb->gpu_pods[i];
		gf_json_obj_begin(j, NULL);
		gf_json_str(j, "uuid", gp->uuid);
		gf_json_arr_begin(j, "pods");
		for (int k = 0; k < gp->npods; k++)
			gf_json_str(j, NULL, gp->pods[k]);
		gf_json_arr_end(j);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
}

int gf_np_ack_read(const struct gf_jv *v, struct gf_np_ack *a, struct gf_err *e)
{
	struct gf_np_rd r = { .e = e };
	int64_t gen = 0;
	int rc;
	memset(a, 0, sizeof(*a));
	if (gf_jv_type(v) != GF_JV_OBJ)
		return gf_err_set(e, GF_EINVAL, "expected a JSON object");
	if ((rc = gf__np_str(&r, v, "state", true, a->state,
			     sizeof(a->state))) ||
	    (rc = gf__np_int(&r, v, "generation", true, 0, INT64_MAX, &gen)) ||
	    (rc = gf__np_int(&r, v, "heartbeat_ms", true, 10, 3600000,
			     &a->heartbeat_ms)) ||
	    (rc = gf__np_int(&r, v, "fence_after_ms", true, 0, INT64_MAX,
			     &a->fence_after_ms)))
		return rc;
	a->generation = (uint64_t)gen;
	const struct gf_jv *acked =
		gf__np_arr(&r, v, "acked", false, GF_NP_MAX_REPORTS, &rc);
	if (rc)
		return rc;
	if (gf_jv_len(acked))
		a->acked = gf_calloc(gf_jv_len(acked), sizeof(*a->acked));
	char saved[96];
	for (size_t i = 0; rc == 0 && i < gf_jv_len(acked); i++) {
		gf__np_enter(&r, "acked", i, saved, sizeof(saved));
		rc = read_ref(&r, gf_jv_at(acked, i), &a->acked[i]);
		gf__np_leave(&r, saved);
		a->nacked = (int)i + 1;
	}
	if (rc)
		gf_np_ack_release(a);
	return rc;
}

void gf_np_ack_release(struct gf_np_ack *a)
{
	gf_free(a->acked);
	a->acked = NULL;
	a->nacked = 0;
}

void gf_np_ack_write(struct gf_json *j, const struct gf_np_ack *a)
{
	gf_json_str(j, "state", a->state);
	gf_json_uint(j, "generation", a->generation);
	gf_json_int(j, "heartbeat_ms", a->heartbeat_ms);
	gf_json_int(j, "fence_after_ms", a->fence_after_ms);
	gf_json_arr_begin(j, "acked");
	for (int i = 0; i < a->nacked; i++) {
		gf_json_obj_begin(j, NULL);
		write_ref(j, &a->acked[i]);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
}
