/*
 * apply.c - mig-parted configs applied through NVML.
 *
 * Per GPU: find the entries that select it (device-filter and devices; a
 * later entry wins, as in mig-parted), read its GPU instances (placement
 * and whether a process runs on them), plan the change with the planner
 * (demand = the config's instances, current = what is there, busy ones
 * fixed), then destroy and create.  Profile ids come from NVML (info.id),
 * not from our table: they differ between GPU families.
 */
#include "apply.h"

#include <stdio.h>
#include <string.h>

#include <gpufleet/mig_plan.h>

#include "../topo/nvml.h"

struct gpu_state {
	unsigned index;
	nvmlDevice_t dev;
	uint16_t devid;
	const struct gf_mig_model *m;
	unsigned profile_id[GF_MIG_MAX_PROFILES]; /* NVML ids, UINT_MAX none */
	struct gf_mig_layout cur;
	nvmlGpuInstance_t gi[GF_MIG_MAX_INSTANCES];
	unsigned gi_id[GF_MIG_MAX_INSTANCES];
};

static const struct gf_mp_entry *select_entry(const struct gf_mp_config *cfg,
					      unsigned index, uint16_t devid)
{
	const struct gf_mp_entry *sel = NULL;
	for (int i = 0; i < cfg->n; i++) {
		const struct gf_mp_entry *en = &cfg->entries[i];
		bool match = en->nfilters == 0;
		for (int k = 0; k < en->nfilters; k++)
			match |= en->filters[k] == devid;
		bool indexed = en->all_devices;
		for (int k = 0; k < en->ndevices; k++)
			indexed |= en->devices[k] == (int)index;
		if (match && indexed)
			sel = en;
	}
	return sel;
}

/* Read the GPU instances there now, and which have processes. */
static int read_state(const struct gf_nvml *nv, struct gpu_state *g,
		      struct gf_err *e)
{
	g->cur.n = 0;
	for (int p = 0; p < g->m->nprofiles; p++) {
		nvmlGpuInstanceProfileInfo_t info;
		g->profile_id[p] = ~0u;
		if (nv->nvmlDeviceGetGpuInstanceProfileInfo(
			    g->dev, g->m->profiles[p].nvml_enum, &info) !=
		    NVML_SUCCESS)
			continue;
		g->profile_id[p] = info.id;
		nvmlGpuInstance_t gis[GF_MIG_MAX_INSTANCES];
		unsigned n = GF_MIG_MAX_INSTANCES;
		if (nv->nvmlDeviceGetGpuInstances(g->dev, info.id, gis, &n) !=
		    NVML_SUCCESS)
			continue;
		for (unsigned k = 0; k < n && g->cur.n < GF_MIG_MAX_INSTANCES;
		     k++) {
			nvmlGpuInstanceInfo_t gi;
			if (nv->nvmlGpuInstanceGetInfo(gis[k], &gi) !=
			    NVML_SUCCESS)
				continue;
			g->gi[g->cur.n] = gis[k];
			g->gi_id[g->cur.n] = gi.id;
			g->cur.inst[g->cur.n++] = (struct gf_mig_instance){
				(uint8_t)p, (uint8_t)gi.placement.start, false
			};
		}
	}
	/* busy: a MIG device of this GPU instance runs a process */
	unsigned max = 0;
	if (nv->nvmlDeviceGetMaxMigDeviceCount &&
	    nv->nvmlDeviceGetMaxMigDeviceCount(g->dev, &max) == NVML_SUCCESS)
		for (unsigned k = 0; k < max; k++) {
			nvmlDevice_t mig;
			unsigned giid, np = 0;
			if (nv->nvmlDeviceGetMigDeviceHandleByIndex(
				    g->dev, k, &mig) != NVML_SUCCESS ||
			    nv->nvmlDeviceGetGpuInstanceId(mig, &giid) !=
				    NVML_SUCCESS)
				continue;
			nvmlReturn_t r =
				nv->nvmlDeviceGetComputeRunningProcesses(
					mig, &np, NULL);
			bool busy = r == NVML_ERROR_INSUFFICIENT_SIZE ||
				    (r == NVML_SUCCESS && np > 0);
			for (int i = 0; i < g->cur.n; i++)
				if (g->gi_id[i] == giid && busy)
					g->cur.inst[i].busy = true;
		}
	char msg[160];
	if (gf_mig_layout_check(g->m, &g->cur, msg, sizeof(msg)) != 0)
		return gf_err_set(e, GF_EINVAL,
				  "GPU %u: the driver reports a layout our "
				  "%s table rejects: %s",
				  g->index, g->m->id, msg);
	return 0;
}

static int destroy_gi(const struct gf_nvml *nv, struct gpu_state *g, int i,
		      bool dry, struct gf_buf *log, struct gf_err *e)
{
	const struct gf_mig_instance *in = &g->cur.inst[i];
	const struct gf_mig_profile *p = &g->m->profiles[in->profile];
	gf_buf_printf(log,
		      "  nvmlComputeInstanceDestroy + nvmlGpuInstanceDestroy"
		      "(gpu=%u, %s@%d)\n",
		      g->index, p->name, in->start);
	if (dry)
		return 0;
	/* compute instances first: the full one a mig-parted layout makes,
	 * and any others */
	for (unsigned ce = 0; ce < 8; ce++) {
		nvmlComputeInstanceProfileInfo_t ci;
		if (nv->nvmlGpuInstanceGetComputeInstanceProfileInfo(
			    g->gi[i], ce, 0, &ci) != NVML_SUCCESS)
			continue;
		nvmlComputeInstance_t cis[8];
		unsigned n = 8;
		if (nv->nvmlGpuInstanceGetComputeInstances(g->gi[i], ci.id, cis,
							   &n) != NVML_SUCCESS)
			continue;
		for (unsigned k = 0; k < n; k++) {
			nvmlReturn_t r = nv->nvmlComputeInstanceDestroy(cis[k]);
			if (r != NVML_SUCCESS)
				return gf_err_set(
					e, GF_ENVML,
					"GPU %u: destroying a compute "
					"instance of %s@%d: %s",
					g->index, p->name, in->start,
					gf_nvml_strerror(nv, r));
		}
	}
	nvmlReturn_t r = nv->nvmlGpuInstanceDestroy(g->gi[i]);
	if (r != NVML_SUCCESS)
		return gf_err_set(e, GF_ENVML, "GPU %u: destroying %s@%d: %s",
				  g->index, p->name, in->start,
				  gf_nvml_strerror(nv, r));
	return 0;
}

static int create_gi(const struct gf_nvml *nv, struct gpu_state *g,
		     const struct gf_mig_instance *in, bool dry,
		     struct gf_buf *log, struct gf_err *e)
{
	const struct gf_mig_profile *p = &g->m->profiles[in->profile];
	unsigned id = g->profile_id[in->profile];
	if (id == ~0u)
		return gf_err_set(e, GF_ENOTSUP,
				  "GPU %u: the driver does not offer %s",
				  g->index, p->name);
	nvmlGpuInstancePlacement_t pl = { in->start, p->mem };
	gf_buf_printf(log,
		      "  nvmlDeviceCreateGpuInstanceWithPlacement(gpu=%u, "
		      "profile=%s id %u, start=%u, size=%u)\n",
		      g->index, p->name, id, pl.start, pl.size);
	/* the CI profile that spans the GPU instance: its compute slices */
	static const unsigned ci_enum[8] = { 0, 0, 1, 2, 3, 3, 6, 4 };
	gf_buf_printf(log,
		      "  nvmlGpuInstanceCreateComputeInstance(gpu=%u, %s@%u, "
		      "ci profile %u)\n",
		      g->index, p->name, pl.start, ci_enum[p->compute & 7]);
	if (dry)
		return 0;
	nvmlGpuInstance_t gi;
	nvmlReturn_t r = nv->nvmlDeviceCreateGpuInstanceWithPlacement(
		g->dev, id, &pl, &gi);
	if (r != NVML_SUCCESS)
		return gf_err_set(e, GF_ENVML, "GPU %u: creating %s@%u: %s",
				  g->index, p->name, pl.start,
				  gf_nvml_strerror(nv, r));
	nvmlComputeInstanceProfileInfo_t ci;
	nvmlComputeInstance_t cih;
	r = nv->nvmlGpuInstanceGetComputeInstanceProfileInfo(
		gi, ci_enum[p->compute & 7], 0, &ci);
	if (r == NVML_SUCCESS)
		r = nv->nvmlGpuInstanceCreateComputeInstance(gi, ci.id, &cih);
	if (r != NVML_SUCCESS)
		return gf_err_set(
			e, GF_ENVML, "GPU %u: compute instance on %s@%u: %s",
			g->index, p->name, pl.start, gf_nvml_strerror(nv, r));
	return 0;
}

static bool same(const struct gf_mig_layout *a, const struct gf_mig_layout *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++) {
		bool f = false;
		for (int j = 0; j < b->n && !f; j++)
			f = a->inst[i].profile == b->inst[j].profile &&
			    a->inst[i].start == b->inst[j].start;
		if (!f)
			return false;
	}
	return true;
}

static int apply_gpu(const struct gf_nvml *nv, struct gpu_state *g,
		     const struct gf_mp_entry *en, bool dry, struct gf_buf *log,
		     struct gf_err *e)
{
	unsigned cur_mode = 0, pend = 0;
	if (nv->nvmlDeviceGetMigMode(g->dev, &cur_mode, &pend) != NVML_SUCCESS)
		return gf_err_set(
			e, GF_ENOTSUP,
			"GPU %u: MIG mode unreadable (not a MIG GPU?)",
			g->index);
	if (cur_mode == NVML_DEVICE_MIG_ENABLE) {
		int rc = read_state(nv, g, e);
		if (rc)
			return rc;
	} else {
		/* MIG off: no instances; NVML names profile ids only once
		 * MIG is on, so until then (a dry run) our table's stand */
		g->cur.n = 0;
		for (int p = 0; p < g->m->nprofiles; p++)
			g->profile_id[p] = g->m->profiles[p].profile_id;
	}
	struct gf_mig_gpu in = { g->m, g->cur };
	struct gf_mig_demand d[GF_MP_MAX_MDEV];
	int nd = 0;
	memset(d, 0, sizeof(d));
	for (int i = 0; i < en->nmdev && en->mig_enabled; i++) {
		if (gf_mig_profile_find(g->m, en->mdev[i].name) < 0)
			return gf_err_set(e, GF_EINVAL,
					  "GPU %u: %s has no profile '%s'",
					  g->index, g->m->id, en->mdev[i].name);
		snprintf(d[nd].profile, sizeof(d[nd].profile), "%s",
			 en->mdev[i].name);
		d[nd++].count = en->mdev[i].count;
	}
	struct gf_mig_plan plan;
	int rc = gf_mig_plan(&in, 1, d, nd, &plan, e);
	if (rc)
		return rc;
	struct gf_mig_gpu_plan gp = plan.gpus[0];
	bool short_of = false;
	for (int k = 0; k < nd; k++)
		short_of |= plan.unserved[k] > 0;
	gf_mig_plan_release(&plan);
	/* the result must be exactly the config: nothing extra kept */
	int want = 0;
	for (int k = 0; k < nd; k++)
		want += d[k].count;
	if (short_of || gp.layout.n != want)
		return gf_err_set(e, GF_EINVAL,
				  "GPU %u: the config cannot be reached "
				  "without moving a busy instance",
				  g->index);
	if (en->mig_enabled && cur_mode != NVML_DEVICE_MIG_ENABLE) {
		gf_buf_printf(log, "  nvmlDeviceSetMigMode(gpu=%u, enable)\n",
			      g->index);
		if (!dry) {
			nvmlReturn_t act,
				r = nv->nvmlDeviceSetMigMode(
					g->dev, NVML_DEVICE_MIG_ENABLE, &act);
			if (r != NVML_SUCCESS)
				return gf_err_set(
					e, GF_ENVML, "GPU %u: enabling MIG: %s",
					g->index, gf_nvml_strerror(nv, r));
			nv->nvmlDeviceGetMigMode(g->dev, &cur_mode, &pend);
			if (cur_mode != NVML_DEVICE_MIG_ENABLE)
				return gf_err_set(e, GF_ENVML,
						  "GPU %u: MIG mode is pending "
						  "a GPU reset; reset it (or "
						  "reboot) and apply again",
						  g->index);
			if ((rc = read_state(nv, g, e)))
				return rc;
		}
	}
	for (int i = 0; i < gp.ndestroy; i++)
		for (int k = 0; k < g->cur.n; k++)
			if (g->cur.inst[k].profile == gp.destroy[i].profile &&
			    g->cur.inst[k].start == gp.destroy[i].start &&
			    (rc = destroy_gi(nv, g, k, dry, log, e)))
				return rc;
	for (int i = 0; i < gp.ncreate; i++)
		if ((rc = create_gi(nv, g, &gp.create[i], dry, log, e)))
			return rc;
	if (!en->mig_enabled && cur_mode == NVML_DEVICE_MIG_ENABLE) {
		gf_buf_printf(log, "  nvmlDeviceSetMigMode(gpu=%u, disable)\n",
			      g->index);
		if (!dry) {
			nvmlReturn_t act,
				r = nv->nvmlDeviceSetMigMode(
					g->dev, NVML_DEVICE_MIG_DISABLE, &act);
			if (r != NVML_SUCCESS)
				return gf_err_set(e, GF_ENVML,
						  "GPU %u: disabling MIG: %s",
						  g->index,
						  gf_nvml_strerror(nv, r));
		}
	}
	if (dry || !en->mig_enabled)
		return 0;
	/* read back and compare */
	struct gf_mig_layout want_l = gp.layout;
	if ((rc = read_state(nv, g, e)))
		return rc;
	if (!same(&g->cur, &want_l))
		return gf_err_set(e, GF_ENVML,
				  "GPU %u: after apply the driver reports %d "
				  "instances, not the %d planned",
				  g->index, g->cur.n, want_l.n);
	gf_buf_printf(log, "  verified: %d instance%s as planned\n", g->cur.n,
		      g->cur.n == 1 ? "" : "s");
	return 0;
}

int gf_mig_apply(const struct gf_mp_config *cfg, bool dry_run,
		 struct gf_buf *log, struct gf_err *e)
{
	const struct gf_nvml *nv;
	int rc = gf_nvml_open(&nv, e);
	if (rc)
		return rc;
	if (!nv->nvmlDeviceGetGpuInstanceProfileInfo ||
	    !nv->nvmlDeviceCreateGpuInstanceWithPlacement ||
	    !nv->nvmlDeviceGetGpuInstances || !nv->nvmlGpuInstanceGetInfo ||
	    !nv->nvmlDeviceGetMigMode || !nv->nvmlDeviceSetMigMode ||
	    !nv->nvmlGpuInstanceDestroy ||
	    !nv->nvmlGpuInstanceCreateComputeInstance ||
	    !nv->nvmlGpuInstanceGetComputeInstanceProfileInfo ||
	    !nv->nvmlDeviceGetComputeRunningProcesses ||
	    !nv->nvmlDeviceGetPciInfo) {
		gf_nvml_close();
		return gf_err_set(e, GF_ENOTSUP,
				  "this NVML lacks the MIG calls (driver too "
				  "old?)");
	}
	unsigned count = 0;
	nv->nvmlDeviceGetCount(&count);
	int failed = 0;
	for (unsigned i = 0; i < count; i++) {
		struct gpu_state g = { .index = i };
		nvmlPciInfo_t pci;
		if (nv->nvmlDeviceGetHandleByIndex(i, &g.dev) != NVML_SUCCESS ||
		    nv->nvmlDeviceGetPciInfo(g.dev, &pci) != NVML_SUCCESS)
			continue;
		g.devid = (uint16_t)(pci.pciDeviceId >> 16);
		const struct gf_mp_entry *en = select_entry(cfg, i, g.devid);
		if (!en) {
			gf_buf_printf(log, "GPU %u: not selected by '%s'\n", i,
				      cfg->name);
			continue;
		}
		g.m = gf_mig_model_by_pci(g.devid);
		if (!g.m) {
			if (!en->all_devices || en->mig_enabled)
				gf_buf_printf(log,
					      "GPU %u: 0x%04X is not a "
					      "MIG-capable GPU gpufleet "
					      "knows; skipped\n",
					      i, g.devid);
			continue;
		}
		gf_buf_printf(log, "GPU %u (%s, %s): config '%s', line %d\n", i,
			      pci.busId, g.m->id, cfg->name, en->line);
		struct gf_err ge;
		gf_err_clear(&ge);
		if (apply_gpu(nv, &g, en, dry_run, log, &ge) != 0) {
			gf_buf_printf(log, "  failed: %s\n", ge.msg);
			if (!failed)
				*e = ge;
			failed++;
		}
	}
	gf_nvml_close();
	if (failed > 1) {
		char first[GF_ERR_MSG_MAX];
		snprintf(first, sizeof(first), "%s", e->msg);
		gf_err_set(e, GF_ENVML, "%d GPUs failed (first: %.400s)",
			   failed, first);
	}
	return failed ? e->code : 0;
}
