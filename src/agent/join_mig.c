/*
 * join_mig.c - the MIG layouts the controller asks of this node's GPUs (its
 * auto-apply, config agents: mig_auto_apply), made real through NVML
 * (gf_mig_apply_gpu, under the agent's NVML lock) on a GPU where no
 * replica of this node runs; the node's inventory is read again and sent
 * (a registration), which tells the controller the new MIG device UUIDs.
 * A GPU that is busy, or a layout NVML refuses, is left as it is and
 * tried again with the next assignments; the replicas placed on its new
 * instances wait, and the assignments do not count as applied.
 */
#include <stdio.h>
#include <string.h>

#include <gpufleet/mig.h>

#include "agent/join_impl.h"
#include "mig/apply.h"
#include "util/log.h"

const char *gf__join_mig_uuid(const struct gf_join *j, int gpu, int start)
{
	for (int i = 0; i < j->inv.nmig; i++)
		if (j->inv.mig[i].gpu == gpu && j->inv.mig[i].start == start)
			return j->inv.mig[i].uuid;
	return "";
}

/* Does the node hold exactly l on its GPU now? */
static bool holds(const struct gf_join *j, const struct gf_np_mig_layout *l)
{
	int on = 0, same = 0;
	for (int i = 0; i < j->inv.nmig; i++) {
		if (j->inv.mig[i].gpu != l->gpu)
			continue;
		on++;
		for (int k = 0; k < l->n; k++)
			same += j->inv.mig[i].start == l->inst[k].start &&
				!strcmp(j->inv.mig[i].profile,
					l->inst[k].profile);
	}
	return on == l->n && same == l->n;
}

static bool gpu_busy(const struct gf_join *j, int gpu)
{
	for (int i = 0; i < j->led.n; i++)
		if (j->led.v[i].st == GF_LE_RUNNING &&
		    (j->led.v[i].gpus >> gpu & 1))
			return true;
	return false;
}

struct apply_call {
	unsigned gpu;
	const struct gf_mig_model *m;
	struct gf_mig_layout layout;
	struct gf_buf log;
	struct gf_err e;
};

static int apply_locked(void *arg)
{
	struct apply_call *c = arg;
	return gf_mig_apply_gpu(c->gpu, c->m, &c->layout, false, &c->log,
				&c->e);
}

/* Make l real on its GPU; 0 or an error (logged). */
static int apply(struct gf_join *j, const struct gf_np_mig_layout *l)
{
	struct apply_call c = { .gpu = (unsigned)l->gpu };
	c.m = gf_mig_model_by_id(j->inv.mig_model);
	if (!c.m) {
		gf_log(GF_LOG_WARN, "join",
		       "GPU %d: a MIG layout asked of a GPU without MIG",
		       l->gpu);
		return GF_EINVAL;
	}
	for (int i = 0; i < l->n && i < GF_MIG_MAX_INSTANCES; i++) {
		int p = gf_mig_profile_find(c.m, l->inst[i].profile);
		if (p < 0) {
			gf_log(GF_LOG_WARN, "join",
			       "GPU %d: no MIG profile '%s'", l->gpu,
			       l->inst[i].profile);
			return GF_EINVAL;
		}
		c.layout.inst[c.layout.n].profile = (uint8_t)p;
		c.layout.inst[c.layout.n++].start = (uint8_t)l->inst[i].start;
	}
	gf_buf_init(&c.log, 64u << 10);
	gf_err_clear(&c.e);
	int rc = j->o.agent ? gf_agent_nvml(j->o.agent, apply_locked, &c)
			    : apply_locked(&c);
	if (rc)
		gf_log(GF_LOG_WARN, "join",
		       "GPU %d: MIG layout not applied: %s", l->gpu, c.e.msg);
	else
		gf_log(GF_LOG_INFO, "join",
		       "GPU %d: MIG layout of %d instances applied", l->gpu,
		       l->n);
	gf_buf_release(&c.log);
	return rc;
}

bool gf__join_mig(struct gf_join *j, const struct gf_np_assignments *a)
{
	bool all = true, changed = false;
	for (int k = 0; k < a->nlayouts; k++) {
		const struct gf_np_mig_layout *l = &a->layouts[k];
		if (holds(j, l))
			continue;
		if (gpu_busy(j, l->gpu) || apply(j, l) != 0) {
			all = false;
			continue;
		}
		changed = true;
	}
	if (changed) {
		struct gf_err e;
		if (gf__join_inventory(j, &e) != 0)
			gf_log(GF_LOG_ERROR, "join", "inventory: %s", e.msg);
		pthread_mutex_lock(&j->lock);
		j->need_register = true; /* the new instances' UUIDs */
		pthread_mutex_unlock(&j->lock);
		for (int k = 0; k < a->nlayouts; k++)
			all = all && holds(j, &a->layouts[k]);
	}
	return all;
}
