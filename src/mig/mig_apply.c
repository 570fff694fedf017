/*
 * mig_apply.c - mig-parted configs applied through NVML.
 *
 * Per GPU: find the entry that selects it (device-filter and devices; a
 * later entry wins, as in mig-parted), read its GPU instances (placement
 * and whether a process runs on them: gf_mig_state_read_gpu, mig/state.c),
 * then choose the target layout:
 * exactly the config's instances (mig-parted's meaning), every busy
 * instance where it is, and as many idle ones kept where they are as can
 * be (gf_mig_reach, an exhaustive search over the model's layouts).
 * Then destroy what the target lacks and create what it adds, largest
 * first with explicit placements.  Profile ids come from NVML (info.id),
 * not from our table: they differ between GPU families.
 *
 * The target is the config itself, never the planner's answer to it: the
 * planner serves a demand on the fewest GPUs, which is another question
 * (comparing its layout with the config's count refused valid configs).
 *
 * Without NVML (gf_mig_apply_offline) the same choice runs on GPUs the
 * caller describes, and the calls are listed as a dry run lists them.
 *
 * One GPU to a given layout (gf_mig_apply_gpu: the node agent applying
 * the controller's proposal) takes the same destroy, create and read
 * back steps (converge, verify), on a GPU in MIG mode with no busy
 * instance only.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "mig/apply.h"
#include "mig/render.h"
#include "mig/state.h"
#include "topo/nvml.h"
#include "util/fmt.h"
#include "util/log.h"

static const struct gf_mp_entry *select_entry(const struct gf_mp_config *cfg,
					      unsigned index, uint16_t devid,
					      uint32_t subsys)
{
	const struct gf_mp_entry *sel = NULL;
	for (int i = 0; i < cfg->n; i++) {
		const struct gf_mp_entry *en = &cfg->entries[i];
		bool match = en->nfilters == 0;
		for (int k = 0; k < en->nfilters; k++)
			match |= gf_mp_filter_matches(&en->filters[k], devid,
						      0x10de, subsys);
		bool indexed = en->all_devices;
		for (int k = 0; k < en->ndevices; k++)
			indexed |= en->devices[k] == (int)index;
		if (match && indexed)
			sel = en;
	}
	return sel;
}

static void log_call(unsigned gpu, const char *call, const char *what,
		     nvmlReturn_t r)
{
	gf_log(GF_LOG_DEBUG, "mig", "apply: gpu=%u %s(%s) = %d", gpu, call,
	       what, (int)r);
}

static int destroy_gi(const struct gf_nvml *nv, struct gf_mig_gpu_state *g,
		      int i, bool dry, struct gf_buf *log, struct gf_err *e)
{
	const struct gf_mig_instance *in = &g->gi[i].inst;
	const struct gf_mig_profile *p = &g->model->profiles[in->profile];
	char what[64];
	gf_note(what, sizeof(what), "%s@%d", p->name, in->start);
	gf_buf_printf(log,
		      "  nvmlComputeInstanceDestroy + nvmlGpuInstanceDestroy"
		      "(gpu=%u, %s)\n",
		      g->index, what);
	if (dry)
		return 0;
	/* compute instances first: the full one a mig-parted layout makes,
	 * and any others */
	for (unsigned ce = 0; ce < 8; ce++) {
		nvmlComputeInstanceProfileInfo_t ci;
		if (nv->nvmlGpuInstanceGetComputeInstanceProfileInfo(
			    g->gi[i].handle, ce, 0, &ci) != NVML_SUCCESS)
			continue;
		nvmlComputeInstance_t cis[8];
		unsigned n = 8;
		if (nv->nvmlGpuInstanceGetComputeInstances(
			    g->gi[i].handle, ci.id, cis, &n) != NVML_SUCCESS)
			continue;
		for (unsigned k = 0; k < n; k++) {
			nvmlReturn_t r = nv->nvmlComputeInstanceDestroy(cis[k]);
			log_call(g->index, "nvmlComputeInstanceDestroy", what,
				 r);
			if (r != NVML_SUCCESS)
				return gf_err_set(
					e, GF_ENVML,
					"GPU %u: destroying a compute "
					"instance of %s: %s",
					g->index, what,
					gf_nvml_strerror(nv, r));
		}
	}
	nvmlReturn_t r = nv->nvmlGpuInstanceDestroy(g->gi[i].handle);
	log_call(g->index, "nvmlGpuInstanceDestroy", what, r);
	if (r != NVML_SUCCESS)
		return gf_err_set(e, GF_ENVML, "GPU %u: destroying %s: %s",
				  g->index, what, gf_nvml_strerror(nv, r));
	return 0;
}

/* The CI profile that spans a GPU instance of c compute slices. */
static unsigned full_ci(unsigned c)
{
	static const unsigned ci_enum[8] = { 0, 0, 1, 2, 3, 3, 6, 4 };
	return ci_enum[c & 7];
}

static void log_create(struct gf_buf *log, unsigned index,
		       const struct gf_mig_profile *p, unsigned id,
		       unsigned start)
{
	gf_buf_printf(log,
		      "  nvmlDeviceCreateGpuInstanceWithPlacement(gpu=%u, "
		      "profile=%s id %u, start=%u, size=%u)\n",
		      index, p->name, id, start, (unsigned)p->mem);
	gf_buf_printf(log,
		      "  nvmlGpuInstanceCreateComputeInstance(gpu=%u, %s@%u, "
		      "ci profile %u)\n",
		      index, p->name, start, full_ci(p->compute));
}

static int create_gi(const struct gf_nvml *nv, struct gf_mig_gpu_state *g,
		     const struct gf_mig_instance *in, bool dry,
		     struct gf_buf *log, struct gf_err *e)
{
	const struct gf_mig_profile *p = &g->model->profiles[in->profile];
	unsigned id = g->profile_id[in->profile];
	if (id == UINT_MAX)
		return gf_err_set(e, GF_ENOTSUP,
				  "GPU %u: the driver does not offer %s",
				  g->index, p->name);
	nvmlGpuInstancePlacement_t pl = { in->start, p->mem };
	log_create(log, g->index, p, id, pl.start);
	if (dry)
		return 0;
	char what[80];
	gf_note(what, sizeof(what), "id %u, start=%u, size=%u", id, pl.start,
		pl.size);
	nvmlGpuInstance_t gi;
	nvmlReturn_t r = nv->nvmlDeviceCreateGpuInstanceWithPlacement(
		g->dev, id, &pl, &gi);
	log_call(g->index, "nvmlDeviceCreateGpuInstanceWithPlacement", what, r);
	if (r != NVML_SUCCESS)
		return gf_err_set(e, GF_ENVML, "GPU %u: creating %s@%u: %s",
				  g->index, p->name, pl.start,
				  gf_nvml_strerror(nv, r));
	nvmlComputeInstanceProfileInfo_t ci;
	nvmlComputeInstance_t cih;
	r = nv->nvmlGpuInstanceGetComputeInstanceProfileInfo(
		gi, full_ci(p->compute), 0, &ci);
	if (r == NVML_SUCCESS) {
		r = nv->nvmlGpuInstanceCreateComputeInstance(gi, ci.id, &cih);
		gf_note(what, sizeof(what), "%s@%u, ci profile %u", p->name,
			pl.start, full_ci(p->compute));
		log_call(g->index, "nvmlGpuInstanceCreateComputeInstance", what,
			 r);
	}
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

/*
 * The layout the entry asks of this GPU: exactly its instances (none when
 * MIG is to be off), around cur's busy ones.  0, or an error naming why.
 */
int gf_mig_apply_target(const struct gf_mig_model *m, unsigned index,
			const struct gf_mp_entry *en,
			const struct gf_mig_layout *cur,
			struct gf_mig_layout *want, struct gf_err *e)
{
	int counts[GF_MIG_MAX_PROFILES] = { 0 };
	for (int i = 0; i < en->nmdev && en->mig_enabled; i++) {
		int p = gf_mig_profile_find(m, en->mdev[i].name);
		if (p < 0)
			return gf_err_set(e, GF_EINVAL,
					  "GPU %u: %s has no profile '%s'",
					  index, m->id, en->mdev[i].name);
		counts[p] += en->mdev[i].count;
	}
	struct gf_mig_instance busy;
	int rc = gf_mig_reach(m, cur, counts, want, &busy);
	if (rc == GF_ENOTFOUND)
		return gf_err_set(e, GF_EINVAL,
				  "GPU %u: these instances do not fit on one "
				  "%s (memory slices, allowed starts or "
				  "maximum counts)",
				  index, m->id);
	if (rc) {
		const char *name = m->profiles[busy.profile].name;
		if (counts[busy.profile] == 0)
			return gf_err_set(e, GF_EINVAL,
					  "GPU %u: the busy %s@%d is not in "
					  "the config, and a busy instance is "
					  "never destroyed",
					  index, name, busy.start);
		return gf_err_set(e, GF_EINVAL,
				  "GPU %u: the config's instances do not fit "
				  "around the busy %s@%d without moving a "
				  "busy instance",
				  index, name, busy.start);
	}
	return 0;
}

/* Set the GPU's MIG mode (logged; not in a dry run).  Enabling fails
 * when the mode stays pending until a GPU reset. */
static int set_mode(const struct gf_nvml *nv, struct gf_mig_gpu_state *g,
		    bool enable, bool dry, struct gf_buf *log, struct gf_err *e)
{
	const char *what = enable ? "enable" : "disable";
	gf_buf_printf(log, "  nvmlDeviceSetMigMode(gpu=%u, %s)\n", g->index,
		      what);
	if (dry)
		return 0;
	nvmlReturn_t act,
		r = nv->nvmlDeviceSetMigMode(g->dev,
					     enable ? NVML_DEVICE_MIG_ENABLE
						    : NVML_DEVICE_MIG_DISABLE,
					     &act);
	log_call(g->index, "nvmlDeviceSetMigMode", what, r);
	if (r != NVML_SUCCESS)
		return gf_err_set(e, GF_ENVML, "GPU %u: %s MIG: %s", g->index,
				  enable ? "enabling" : "disabling",
				  gf_nvml_strerror(nv, r));
	if (!enable)
		return 0;
	int rc = gf_mig_state_refresh(nv, g, e);
	if (rc == 0 && g->mode != NVML_DEVICE_MIG_ENABLE)
		rc = gf_err_set(e, GF_ENVML,
				"GPU %u: MIG mode is pending a GPU reset; "
				"reset it (or reboot) and apply again",
				g->index);
	return rc;
}

/* Destroy the GPU's instances `want` lacks (compute instances first),
 * then create what it adds, in its order (creation order: largest
 * first, explicit placements).  The caller made sure no busy instance is
 * destroyed. */
static int converge(const struct gf_nvml *nv, struct gf_mig_gpu_state *g,
		    const struct gf_mig_layout *want, bool dry,
		    struct gf_buf *log, struct gf_err *e)
{
	struct gf_mig_layout cur;
	gf_mig_state_layout(g, &cur);
	int rc;
	for (int k = 0; k < cur.n; k++)
		if (!gf_mig_layout_holds(want, &cur.inst[k]) &&
		    (rc = destroy_gi(nv, g, k, dry, log, e)))
			return rc;
	for (int i = 0; i < want->n; i++)
		if (!gf_mig_layout_holds(&cur, &want->inst[i]) &&
		    (rc = create_gi(nv, g, &want->inst[i], dry, log, e)))
			return rc;
	return 0;
}

/* Read the GPU back and compare it with `want`. */
static int verify(const struct gf_nvml *nv, struct gf_mig_gpu_state *g,
		  const struct gf_mig_layout *want, struct gf_buf *log,
		  struct gf_err *e)
{
	int rc = gf_mig_state_refresh(nv, g, e);
	if (rc)
		return rc;
	struct gf_mig_layout cur;
	gf_mig_state_layout(g, &cur);
	if (!same(&cur, want))
		return gf_err_set(e, GF_ENVML,
				  "GPU %u: after apply the driver reports %d "
				  "instances, not the %d planned",
				  g->index, cur.n, want->n);
	gf_buf_printf(log, "  verified: %d instance%s as planned\n", cur.n,
		      cur.n == 1 ? "" : "s");
	return 0;
}

/* One GPU of a config, read by gf_mig_state_read_gpu: the target, MIG
 * on if needed, the instances, MIG off if asked, then a read back. */
static int apply_gpu(const struct gf_nvml *nv, struct gf_mig_gpu_state *g,
		     const struct gf_mp_entry *en, bool dry, struct gf_buf *log,
		     struct gf_err *e)
{
	if (!g->mig_supported)
		return gf_err_set(
			e, GF_ENOTSUP,
			"GPU %u: MIG mode unreadable (not a MIG GPU?)",
			g->index);
	bool was_on = g->mode == NVML_DEVICE_MIG_ENABLE;
	struct gf_mig_layout cur, want;
	gf_mig_state_layout(g, &cur);
	int rc = gf_mig_apply_target(g->model, g->index, en, &cur, &want, e);
	if (rc)
		return rc;
	if (en->mig_enabled && !was_on) {
		if ((rc = set_mode(nv, g, true, dry, log, e)))
			return rc;
		/* MIG was off: nothing there, the target stands */
		gf_mig_state_layout(g, &cur);
		if (!dry && cur.n > 0 &&
		    (rc = gf_mig_apply_target(g->model, g->index, en, &cur,
					      &want, e)))
			return rc;
	}
	if ((rc = converge(nv, g, &want, dry, log, e)))
		return rc;
	if (!en->mig_enabled && was_on &&
	    (rc = set_mode(nv, g, false, dry, log, e)))
		return rc;
	if (dry || !en->mig_enabled)
		return 0;
	return verify(nv, g, &want, log, e);
}

/* "FILE:LINE: config 'x': " before a GPU's message; the count when more
 * than one GPU failed. */
static int failure(const struct gf_mp_config *cfg, int failed,
		   const struct gf_err *first_ge, int first_line,
		   struct gf_err *e)
{
	if (failed == 1)
		return gf_err_set(e, first_ge->code, "%s:%d: config '%s': %s",
				  cfg->path, first_line, cfg->name,
				  first_ge->msg);
	return gf_err_set(e, first_ge->code,
			  "%s: config '%s': %d GPUs failed (first, line %d: "
			  "%.380s)",
			  cfg->path, cfg->name, failed, first_line,
			  first_ge->msg);
}

int gf_mig_apply(const struct gf_mp_config *cfg, bool dry_run,
		 struct gf_buf *log, struct gf_err *e)
{
	const struct gf_nvml *nv;
	int rc = gf_nvml_open(&nv, e);
	if (rc)
		return rc;
	unsigned count = 0;
	nv->nvmlDeviceGetCount(&count);
	gf_log(GF_LOG_DEBUG, "mig", "apply: config '%s', %u GPUs, %s",
	       cfg->name, count, dry_run ? "dry run" : "for real");
	int failed = 0, first_line = 0;
	struct gf_err first;
	gf_err_clear(&first);
	for (unsigned i = 0; i < count; i++) {
		struct gf_mig_gpu_state g;
		struct gf_err ge;
		gf_err_clear(&ge);
		int grc = gf_mig_state_read_gpu(nv, i, &g, &ge);
		if (!g.dev || !g.devid)
			continue;
		const struct gf_mp_entry *en =
			select_entry(cfg, i, g.devid, g.subsys);
		if (!en) {
			gf_buf_printf(log, "GPU %u: not selected by '%s'\n", i,
				      cfg->name);
			continue;
		}
		if (!g.model) {
			if (!en->all_devices || en->mig_enabled)
				gf_buf_printf(log,
					      "GPU %u: 0x%04X is not a "
					      "MIG-capable GPU gpufleet "
					      "knows; skipped\n",
					      i, g.devid);
			continue;
		}
		gf_buf_printf(log, "GPU %u (%s, %s): config '%s', line %d\n", i,
			      g.busid, g.model->id, cfg->name, en->line);
		if (grc == 0)
			grc = apply_gpu(nv, &g, en, dry_run, log, &ge);
		if (grc != 0) {
			gf_buf_printf(log, "  failed: %s\n", ge.msg);
			if (!failed) {
				first = ge;
				first_line = en->line;
			}
			failed++;
		}
	}
	gf_nvml_close();
	return failed ? failure(cfg, failed, &first, first_line, e) : 0;
}

/* Why GPU g cannot take a layout now (0 when it can): not the model
 * the layout is for, MIG off, or an instance busy. */
static int check_gpu_free(const struct gf_mig_gpu_state *g,
			  const struct gf_mig_model *m, struct gf_err *e)
{
	if (g->model != m)
		return gf_err_set(e, GF_EINVAL,
				  "GPU %u: the layout is for a %s, the GPU is "
				  "%s%s",
				  g->index, m->id, g->model ? "a " : "",
				  g->model ? g->model->id
					   : "not a MIG GPU gpufleet knows");
	if (g->mode != NVML_DEVICE_MIG_ENABLE)
		return gf_err_set(e, GF_ECONFLICT,
				  "GPU %u: MIG mode is off%s; enable it (mig "
				  "apply) before giving it a layout",
				  g->index,
				  g->pending == NVML_DEVICE_MIG_ENABLE
					  ? " (on after a GPU reset)"
					  : "");
	for (int i = 0; i < g->n; i++)
		if (g->gi[i].inst.busy)
			return gf_err_set(e, GF_ECONFLICT,
					  "GPU %u: the %s@%d (GPU instance "
					  "%u) is busy: a process runs on it, "
					  "and a layout is applied only to a "
					  "GPU with no running instance",
					  g->index, g->gi[i].profile,
					  g->gi[i].inst.start, g->gi[i].id);
	return 0;
}

int gf_mig_apply_gpu(unsigned index, const struct gf_mig_model *m,
		     const struct gf_mig_layout *layout, bool dry_run,
		     struct gf_buf *log, struct gf_err *e)
{
	char msg[120];
	if (gf_mig_layout_check(m, layout, msg, sizeof(msg)) != 0)
		return gf_err_set(e, GF_EINVAL, "GPU %u: the %s layout: %s",
				  index, m->id, msg);
	struct gf_mig_layout want = *layout;
	for (int i = 0; i < want.n; i++)
		want.inst[i].busy = false;
	gf_mig_creation_order(m, &want);
	const struct gf_nvml *nv;
	int rc = gf_nvml_open(&nv, e);
	if (rc)
		return rc;
	unsigned count = 0;
	struct gf_mig_gpu_state g;
	if (nv->nvmlDeviceGetCount(&count) != NVML_SUCCESS || index >= count)
		rc = gf_err_set(e, GF_ENOTFOUND,
				"GPU %u: no such GPU (NVML reports %u)", index,
				count);
	if (rc == 0)
		rc = gf_mig_state_read_gpu(nv, index, &g, e);
	if (rc == 0)
		rc = check_gpu_free(&g, m, e);
	if (rc == 0) {
		gf_buf_printf(
			log, "GPU %u (%s, %s): a layout of %d instance%s\n",
			index, g.busid, m->id, want.n, want.n == 1 ? "" : "s");
		rc = converge(nv, &g, &want, dry_run, log, e);
	}
	if (rc == 0 && !dry_run)
		rc = verify(nv, &g, &want, log, e);
	gf_nvml_close();
	return rc;
}

int gf_mig_apply_offline(const struct gf_mp_config *cfg,
			 const struct gf_mig_gpu *gpus, const bool *mig_on,
			 int ngpus, struct gf_buf *log, struct gf_err *e)
{
	int failed = 0, first_line = 0;
	struct gf_err first;
	gf_err_clear(&first);
	for (int i = 0; i < ngpus; i++) {
		const struct gf_mig_model *m = gpus[i].model;
		const struct gf_mp_entry *en =
			select_entry(cfg, (unsigned)i, m->pci_ids[0], 0);
		if (!en) {
			gf_buf_printf(log, "GPU %d: not selected by '%s'\n", i,
				      cfg->name);
			continue;
		}
		bool on = mig_on && mig_on[i];
		gf_buf_printf(log,
			      "GPU %d (%s, MIG %s): config '%s', line %d\n", i,
			      m->id, on ? "on" : "off", cfg->name, en->line);
		struct gf_mig_layout want;
		struct gf_err ge;
		gf_err_clear(&ge);
		if (gf_mig_apply_target(m, (unsigned)i, en, &gpus[i].current,
					&want, &ge) != 0) {
			gf_buf_printf(log, "  failed: %s\n", ge.msg);
			if (!failed) {
				first = ge;
				first_line = en->line;
			}
			failed++;
			continue;
		}
		if (en->mig_enabled && !on)
			gf_buf_printf(
				log, "  nvmlDeviceSetMigMode(gpu=%d, enable)\n",
				i);
		const struct gf_mig_layout *cur = &gpus[i].current;
		for (int k = 0; k < cur->n; k++)
			if (!gf_mig_layout_holds(&want, &cur->inst[k]))
				gf_buf_printf(
					log,
					"  nvmlComputeInstanceDestroy + "
					"nvmlGpuInstanceDestroy(gpu=%d, "
					"%s@%d)\n",
					i,
					m->profiles[cur->inst[k].profile].name,
					cur->inst[k].start);
		for (int k = 0; k < want.n; k++)
			if (!gf_mig_layout_holds(cur, &want.inst[k])) {
				const struct gf_mig_profile *p =
					&m->profiles[want.inst[k].profile];
				log_create(log, (unsigned)i, p, p->profile_id,
					   want.inst[k].start);
			}
		if (!en->mig_enabled && on)
			gf_buf_printf(log,
				      "  nvmlDeviceSetMigMode(gpu=%d, "
				      "disable)\n",
				      i);
	}
	return failed ? failure(cfg, failed, &first, first_line, e) : 0;
}
