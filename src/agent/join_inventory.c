/*
 * join_inventory.c - what this node is, as its registration says it: CPUs,
 * memory, each GPU (index, UUID, name, memory, MIG mode, health), the
 * MIG instances with their device UUIDs, the GPUs' link qualities and
 * the labels.  GPUs come in NVML's index order, the order the controller
 * places by.
 */
#include <stdio.h>
#include <string.h>

#include <gpufleet/catalog.h>
#include <gpufleet/gpu_topo.h>

#include "agent/join_impl.h"
#include "mig/state.h"
#include "util/fmt.h"
#include "util/log.h"

static int read_mig(void *arg)
{
	struct gf_mig_node_state *st = arg;
	struct gf_err e;
	int rc = gf_mig_state_read(st, &e);
	if (rc)
		gf_log(GF_LOG_INFO, "join", "MIG state: %s", e.msg);
	return rc;
}

/* MIG instances of the GPUs in MIG mode, from NVML. */
static void mig_instances(struct gf_join *j, struct gf_np_inventory *inv)
{
	struct gf_mig_node_state st = { 0 };
	int rc = j->o.agent ? gf_agent_nvml(j->o.agent, read_mig, &st)
			    : read_mig(&st);
	for (int g = 0; rc == 0 && g < st.ngpus && g < inv->ngpus; g++) {
		const struct gf_mig_gpu_state *m = &st.gpus[g];
		inv->gpus[g].mig_mode = m->mode == NVML_DEVICE_MIG_ENABLE;
		if (m->model && !inv->mig_model[0] &&
		    gf_fmt(inv->mig_model, sizeof(inv->mig_model), "%s",
			   m->model->id) != 0)
			inv->mig_model[0] = '\0'; /* no catalog id is so long */
		for (int k = 0; k < m->n && inv->nmig < GF_CTL_MAX_MIG; k++) {
			struct gf_np_mig *x = &inv->mig[inv->nmig];
			x->gpu = g;
			x->start = m->gi[k].inst.start;
			if (gf_fmt(x->profile, sizeof(x->profile), "%s",
				   m->gi[k].profile) != 0 ||
			    gf_fmt(x->uuid, sizeof(x->uuid), "%s",
				   m->gi[k].uuid) != 0) {
				gf_log(GF_LOG_WARN, "join",
				       "GPU %d: MIG instance '%.40s' (%.60s): "
				       "a name too long, not reported",
				       g, m->gi[k].profile, m->gi[k].uuid);
				continue;
			}
			inv->nmig++;
		}
	}
	gf_mig_state_release(&st);
}

/* One of the options into the inventory (NULL: ""); GF_EINVAL naming it
 * when it does not fit. */
static int put(char *dst, size_t cap, const char *what, const char *v,
	       struct gf_err *e)
{
	if (gf_fmt(dst, cap, "%s", v ? v : "") == 0)
		return 0;
	return gf_err_set(e, GF_EINVAL,
			  "join: %s '%.60s...' is longer than %zu bytes", what,
			  v, cap - 1);
}

/* What the options say of the node. */
static int inventory_opts(const struct gf_join *j, struct gf_np_inventory *inv,
			  struct gf_err *e)
{
	const struct gf_join_opts *o = &j->o;
	int rc = put(inv->address, sizeof(inv->address), "address",
		     o->address ? o->address : o->name, e);
	if (rc == 0)
		rc = put(inv->agent_url, sizeof(inv->agent_url), "agent URL",
			 o->agent_url, e);
	if (rc == 0)
		rc = put(inv->version, sizeof(inv->version), "version",
			 o->version, e);
	if (rc == 0)
		rc = put(inv->labels, sizeof(inv->labels), "labels", o->labels,
			 e);
	if (rc == 0)
		rc = put(inv->block, sizeof(inv->block), "block", o->block, e);
	return rc;
}

int gf__join_inventory(struct gf_join *j, struct gf_err *e)
{
	const struct gf_node *n = j->o.node;
	struct gf_np_inventory *inv = &j->inv;
	gf_np_inventory_release(inv); /* a join before */
	memset(inv, 0, sizeof(*inv));
	/* room for the most a node reports: one agent, one inventory */
	gf_np_inventory_room(inv, GF_CNODE_MAX_GPUS, GF_CTL_MAX_MIG);
	int rc = inventory_opts(j, inv, e);
	if (rc)
		return rc;
	inv->cpu_milli = (int32_t)(gf_bitmap_count(&n->cpus) * 1000);
	uint64_t mem = 0;
	for (int i = 0; i < n->nnuma; i++)
		mem += n->numa[i].memory_bytes;
	inv->memory_mib = (int64_t)(mem >> 20);
	if (n->ngpus > GF_CNODE_MAX_GPUS)
		return gf_err_set(e, GF_ETOOBIG,
				  "%d GPUs: a node holds at most %d", n->ngpus,
				  GF_CNODE_MAX_GPUS);
	for (int g = 0; g < n->ngpus; g++) {
		const struct gf_gpu *x = &n->gpus[g];
		struct gf_np_gpu *y = &inv->gpus[g];
		if (!x->model)
			return gf_err_set(e, GF_EINVAL,
					  "GPU %d (%s): not in the GPU catalog",
					  g, x->name);
		if (g > 0 && x->model != n->gpus[0].model)
			return gf_err_set(
				e, GF_ENOTSUP,
				"GPU %d is a %s, GPU 0 a %s: one model "
				"per node",
				g, x->model->id, n->gpus[0].model->id);
		if (!x->uuid[0])
			gf_log(GF_LOG_WARN, "join",
			       "GPU %d: no UUID (NVML did not answer for it): "
			       "its jobs get its index",
			       g);
		y->index = g;
		if (gf_fmt(y->uuid, sizeof(y->uuid), "%s", x->uuid) != 0)
			return gf_err_set(e, GF_EINVAL,
					  "GPU %d: UUID '%.60s...' longer than "
					  "%zu bytes",
					  g, x->uuid, sizeof(y->uuid) - 1);
		gf_note(y->name, sizeof(y->name), "%s", x->name);
		y->memory_mib = (int64_t)x->memory_mib;
		y->mig_mode = x->mig_mode == 1;
		y->healthy = true;
		inv->ngpus = g + 1;
	}
	if (inv->ngpus && gf_fmt(inv->gpu_model, sizeof(inv->gpu_model), "%s",
				 n->gpus[0].model->id) != 0)
		return gf_err_set(e, GF_EINVAL,
				  "GPU model '%.60s...': too long",
				  n->gpus[0].model->id);
	struct gf_err te;
	if (inv->ngpus && gf_gpu_topo_from_node(n, &inv->topo, &te) == 0)
		inv->has_topo = true;
	if (inv->ngpus)
		mig_instances(j, inv);
	return 0;
}
