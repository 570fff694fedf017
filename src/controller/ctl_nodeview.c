/*
 * ctl_nodeview.c - a node as GET /v1/nodes and GET /v1/nodes/{name}
 * show it: the core's node, its agent's state and GPUs, the replicas
 * completing there.  Read by the handlers of ctl_api.c, agents_http.c and
 * drain.c, under ctl_lock.
 */
#include <string.h>

#include "controller/jobjson.h"
#include "controller/service_impl.h"
#include "util/fmt.h"

/* The replicas completing on GPU g of node i: held by their ending jobs
 * until their processes are gone (docs/cluster.md). */
static void held_by(struct gf_json *j, const struct gf_ctl *ctl, int i, int g)
{
	gf_json_arr_begin(j, "completing");
	for (int k = 0, n = gf_ctl_nholding(ctl); k < n; k++) {
		const struct gf_job *job = gf_ctl_holding_at(ctl, k);
		for (int h = 0; h < job->nheld; h++) {
			const struct gf_job_held *x = &job->held[h];
			bool on = false;
			for (int q = 0; q < x->place.ngpus; q++)
				on |= x->place.gpus[q] == g;
			if (x->place.node != i || !on)
				continue;
			gf_json_obj_begin(j, NULL);
			gf_json_str(j, "job", job->id);
			gf_json_int(j, "attempt", x->attempt);
			gf_json_int(j, "replica", x->replica);
			gf_json_str(j, "why", x->why);
			gf_json_obj_end(j);
		}
	}
	gf_json_arr_end(j);
}

void gf__node_json(struct gf_json *j, const struct gf_service *s, int i)
{
	const struct gf_ctl *ctl = s->ctl;
	const struct gf_cluster *c = gf_ctl_cluster(ctl);
	const struct gf_cnode *n = &c->nodes[i];
	const struct gf_ctl_node *x = gf_ctl_node(ctl, i);
	gf_json_obj_begin(j, NULL);
	gf_json_str(j, "name", c->names[i]);
	const char *state = gf__agents_state(s->ag, i);
	gf_json_str(j, "state", state);
	if (strcmp(state, "ready") != 0)
		gf_json_str(j, "reason", gf__agents_reason(s->ag, i));
	gf_json_str(j, "block", gf_ctl_config(ctl)->blocks[x->block]);
	if (n->ngpus)
		gf_json_str(j, "gpu_model", c->models[n->model]);
	else
		gf_json_null(j, "gpu_model");
	gf_json_int(j, "cpu_milli", n->cpu_cap);
	gf_json_int(j, "cpu_free_milli", n->cpu_left);
	gf_json_int(j, "memory_mib", n->mem_cap);
	gf_json_int(j, "memory_free_mib", n->mem_left);
	gf_json_kv(j, "labels", x->labels);
	gf_json_arr_begin(j, "gpus");
	for (int g = 0; g < n->ngpus; g++) {
		const char *uuid = gf__agents_uuid(s->ag, i, g);
		bool healthy = gf_ctl_gpu_is_healthy(ctl, i, g);
		gf_json_obj_begin(j, NULL);
		gf_json_int(j, "index", g);
		if (uuid)
			gf_json_str(j, "uuid", uuid);
		else
			gf_json_null(j, "uuid"); /* a node without an agent */
		gf_json_bool(j, "healthy", healthy);
		if (!healthy)
			gf_json_str(j, "reason", gf_ctl_gpu_reason(ctl, i, g));
		gf_json_int(j, "free_milli", n->gpu_left[g]);
		held_by(j, ctl, i, g);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
	gf_json_arr_begin(j, "mig");
	for (int k = 0; k < x->nmig; k++) {
		gf_json_obj_begin(j, NULL);
		gf_json_int(j, "gpu", x->mig[k].gpu);
		gf_json_str(j, "profile", x->mig[k].profile);
		gf_json_int(j, "start", x->mig[k].start);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
	gf_json_obj_end(j);
}
