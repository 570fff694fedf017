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

static const struct gf__np_field run_fields[] = {
	GF__NP_INT(struct gf_job_run, "started_ms", true, started_ms, 1,
		   INT64_MAX),
	GF__NP_INT(struct gf_job_run, "ended_ms", true, ended_ms, 1, INT64_MAX),
	GF__NP_INT(struct gf_job_run, "exit_code", true, exit_code, -1,
		   255 + 128),
	GF__NP_INT(struct gf_job_run, "gpu_ms", true, gpu_ms, 0, INT64_MAX),
	GF__NP_STR(struct gf_job_run, "reason", false, reason),
	{ 0 },
};

static const struct gf__np_field health_fields[] = {
	GF__NP_INT(struct gf_np_health, "index", true, index, 0,
		   GF_CNODE_MAX_GPUS - 1),
	GF__NP_BOOL(struct gf_np_health, "healthy", false, healthy),
	GF__NP_STR(struct gf_np_health, "reason", false, reason),
	{ 0 },
};

static const struct gf__np_field hb_fields[] = {
	GF__NP_UINT(struct gf_np_heartbeat, "generation", false, generation),
	{ 0 },
};

static const struct gf__np_field ack_fields[] = {
	GF__NP_STR(struct gf_np_ack, "state", true, state),
	GF__NP_UINT(struct gf_np_ack, "generation", true, generation),
	GF__NP_INT(struct gf_np_ack, "heartbeat_ms", true, heartbeat_ms, 10,
		   3600000),
	GF__NP_INT(struct gf_np_ack, "fence_after_ms", true, fence_after_ms, 0,
		   INT64_MAX),
	{ 0 },
};

static int read_ref(struct gf_np_rd *r, const struct gf_jv *v,
		    struct gf_np_ref *ref)
{
	memset(ref, 0, sizeof(*ref));
	int rc = gf__np_obj(r, v);
	return rc ? rc : gf__np_fields_read(r, v, gf__np_ref_fields, ref);
}

/* Element i of an array of struct gf_np_ref (ctx). */
static int read_ref_at(struct gf_np_rd *r, const struct gf_jv *v, size_t i,
		       void *ctx)
{
	return read_ref(r, v, (struct gf_np_ref *)ctx + i);
}

/* Element i of an array of struct gf_np_report (ctx). */
static int read_report_at(struct gf_np_rd *r, const struct gf_jv *v, size_t i,
			  void *ctx)
{
	struct gf_np_report *rep = (struct gf_np_report *)ctx + i;
	struct gf_job_run *run = &rep->run;
	int rc = read_ref(r, v, &rep->ref);
	memset(run, 0, sizeof(*run));
	if (rc || (rc = gf__np_fields_read(r, v, run_fields, run)))
		return rc;
	if (run->ended_ms < run->started_ms)
		return gf__np_bad(r, "ended_ms", "before started_ms");
	run->attempt = rep->ref.attempt;
	run->replica = rep->ref.replica;
	return 0;
}

/* Element i of "health" of the heartbeat ctx. */
static int read_health_at(struct gf_np_rd *r, const struct gf_jv *g, size_t i,
			  void *ctx)
{
	struct gf_np_health *h = &((struct gf_np_heartbeat *)ctx)->health[i];
	h->healthy = true;
	h->reason[0] = '\0';
	int rc = gf__np_obj(r, g);
	return rc ? rc : gf__np_fields_read(r, g, health_fields, h);
}

/* Element k of "pods" of the struct gf_np_gpu_pods ctx: a pod's UID. */
static int read_pod_at(struct gf_np_rd *r, const struct gf_jv *v, size_t k,
		       void *ctx)
{
	const char *uid = gf_jv_str(v);
	if (uid == NULL)
		return gf__np_bad(r, "", "expected a string");
	if (!uid[0])
		return gf__np_bad(r, "", "empty");
	if (strlen(uid) >= GF_NP_POD_UID_MAX)
		return gf__np_bad(r, "", "longer than %d bytes",
				  GF_NP_POD_UID_MAX - 1);
	memcpy(((struct gf_np_gpu_pods *)ctx)->pods[k], uid, strlen(uid) + 1);
	return 0;
}

/* Element i of "gpu_pods": the array ctx of struct gf_np_gpu_pods,
 * {"uuid": "GPU-...", "pods": ["UID", ...]} */
static int read_gpu_pods_at(struct gf_np_rd *r, const struct gf_jv *g, size_t i,
			    void *ctx)
{
	struct gf_np_gpu_pods *gp = (struct gf_np_gpu_pods *)ctx + i;
	int rc = gf__np_obj(r, g);
	if (rc == 0)
		rc = gf__np_str(r, g, "uuid", true, gp->uuid, sizeof(gp->uuid));
	if (rc == 0 && !gp->uuid[0])
		rc = gf__np_bad(r, "uuid", "empty");
	const struct gf_jv *pods =
		rc ? NULL
		   : gf__np_arr(r, g, "pods", true, GF_NP_PODS_PER_GPU, &rc);
	return rc ? rc
		  : gf__np_walk(r, "pods", pods, read_pod_at, gp, &gp->npods);
}

/* After the generation: health, running, reports, gpu_pods. */
static int read_lists(struct gf_np_rd *r, const struct gf_jv *v, void *out)
{
	struct gf_np_heartbeat *hb = out;
	int rc = gf__np_each(r, v, "health", false, GF_CNODE_MAX_GPUS,
			     read_health_at, hb, &hb->nhealth);
	/* both arrays checked before their elements are read */
	const struct gf_jv *run =
		rc ? NULL
		   : gf__np_arr(r, v, "running", false, GF_NP_MAX_RUNNING, &rc);
	const struct gf_jv *rep =
		rc ? NULL
		   : gf__np_arr(r, v, "reports", false, GF_NP_MAX_REPORTS, &rc);
	if (rc)
		return rc;
	if (gf_jv_len(run))
		hb->running = gf_calloc(gf_jv_len(run), sizeof(*hb->running));
	if (gf_jv_len(rep))
		hb->reports = gf_calloc(gf_jv_len(rep), sizeof(*hb->reports));
	if ((rc = gf__np_walk(r, "running", run, read_ref_at, hb->running,
			      &hb->nrunning)) ||
	    (rc = gf__np_walk(r, "reports", rep, read_report_at, hb->reports,
			      &hb->nreports)) ||
	    (rc = gf__np_each_new(r, v, "gpu_pods", false, GF_NP_MAX_GPU_PODS,
				  sizeof(*hb->gpu_pods), &hb->gpu_pods,
				  read_gpu_pods_at, &hb->ngpu_pods)))
		gf_np_heartbeat_release(hb);
	return rc;
}

int gf_np_heartbeat_read(const struct gf_jv *v, struct gf_np_heartbeat *hb,
			 struct gf_err *e)
{
	return gf__np_doc(v, hb, sizeof(*hb), hb_fields, read_lists, e);
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

void gf_np_heartbeat_write(struct gf_json *j, const struct gf_np_heartbeat *hb)
{
	gf__np_fields_write(j, hb_fields, hb);
	gf__np_list_write(j, "health", health_fields, hb->health,
			  sizeof(hb->health[0]), hb->nhealth);
	gf__np_list_write(j, "running", gf__np_ref_fields, hb->running,
			  sizeof(*hb->running), hb->nrunning);
	gf_json_arr_begin(j, "reports");
	for (int i = 0; i < hb->nreports; i++) {
		gf_json_obj_begin(j, NULL);
		gf__np_fields_write(j, gf__np_ref_fields, &hb->reports[i].ref);
		gf__np_fields_write(j, run_fields, &hb->reports[i].run);
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

static int read_acked(struct gf_np_rd *r, const struct gf_jv *v, void *out)
{
	struct gf_np_ack *a = out;
	int rc = gf__np_each_new(r, v, "acked", false, GF_NP_MAX_REPORTS,
				 sizeof(*a->acked), &a->acked, read_ref_at,
				 &a->nacked);
	if (rc)
		gf_np_ack_release(a);
	return rc;
}

int gf_np_ack_read(const struct gf_jv *v, struct gf_np_ack *a, struct gf_err *e)
{
	return gf__np_doc(v, a, sizeof(*a), ack_fields, read_acked, e);
}

void gf_np_ack_release(struct gf_np_ack *a)
{
	gf_free(a->acked);
	a->acked = NULL;
	a->nacked = 0;
}

void gf_np_ack_write(struct gf_json *j, const struct gf_np_ack *a)
{
	gf__np_fields_write(j, ack_fields, a);
	gf__np_list_write(j, "acked", gf__np_ref_fields, a->acked,
			  sizeof(*a->acked), a->nacked);
}
