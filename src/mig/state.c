/*
 * state.c - a machine's MIG state through NVML (what is read: state.h).
 *
 * GPU instances are listed per profile of our model's table
 * (nvmlDeviceGetGpuInstanceProfileInfo gives NVML's profile id,
 * nvmlDeviceGetGpuInstances the instances, nvmlGpuInstanceGetInfo each
 * one's id and placement).  MIG devices (one per compute instance) are
 * then walked by index: nvmlDeviceGetGpuInstanceId ties each to its GPU
 * instance, nvmlDeviceGetUUID gives the "MIG-..." UUID, and a compute
 * process on any of them makes the instance busy.
 *
 * Invariants of a GPU read without error: n <= GF_MIG_MAX_INSTANCES, the
 * layout obeys the model's rules (gf_mig_layout_check), instance ids are
 * NVML's, and every MIG device's UUID is recorded on the instance whose
 * id it reports (the first, when a GPU instance has several).
 */
#include "mig/state.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

/* Handle, PCI id, bus id, UUID and model of GPU `index`. */
static int identify(const struct gf_nvml *nv, unsigned index,
		    struct gf_mig_gpu_state *g, struct gf_err *e)
{
	memset(g, 0, sizeof(*g));
	g->index = index;
	nvmlPciInfo_t pci;
	nvmlReturn_t r = nv->nvmlDeviceGetHandleByIndex(index, &g->dev);
	if (r != NVML_SUCCESS) {
		g->dev = NULL;
		return gf_err_set(e, GF_ENVML, "GPU %u: no handle: %s", index,
				  gf_nvml_strerror(nv, r));
	}
	if (nv->nvmlDeviceGetPciInfo(g->dev, &pci) == NVML_SUCCESS) {
		g->devid = (uint16_t)(pci.pciDeviceId >> 16);
		g->subsys = pci.pciSubSystemId;
		if (gf_fmt(g->busid, sizeof(g->busid), "%s", pci.busId))
			g->busid[0] = '\0'; /* NVML's is as long: never */
	}
	if (nv->nvmlDeviceGetUUID(g->dev, g->uuid, sizeof(g->uuid)) !=
	    NVML_SUCCESS)
		g->uuid[0] = '\0';
	g->model = g->devid ? gf_mig_model_by_pci(g->devid) : NULL;
	return 0;
}

/* The instances of profile p (NVML id `id`) into g; 0 or GF_EINVAL. */
static int read_profile(const struct gf_nvml *nv, struct gf_mig_gpu_state *g,
			int p, unsigned id, struct gf_err *e)
{
	nvmlGpuInstance_t gis[GF_MIG_MAX_INSTANCES];
	unsigned n = GF_MIG_MAX_INSTANCES;
	nvmlReturn_t r = nv->nvmlDeviceGetGpuInstances(g->dev, id, gis, &n);
	if (r == NVML_ERROR_INSUFFICIENT_SIZE)
		n = GF_MIG_MAX_INSTANCES + 1;
	else if (r != NVML_SUCCESS)
		return 0; /* none of this profile */
	if (g->n + (int)n > GF_MIG_MAX_INSTANCES)
		return gf_err_set(e, GF_EINVAL,
				  "GPU %u: the driver reports more than %d GPU "
				  "instances",
				  g->index, GF_MIG_MAX_INSTANCES);
	for (unsigned k = 0; k < n; k++) {
		nvmlGpuInstanceInfo_t info;
		if (nv->nvmlGpuInstanceGetInfo(gis[k], &info) != NVML_SUCCESS)
			continue;
		struct gf_mig_gi_state *gi = &g->gi[g->n++];
		memset(gi, 0, sizeof(*gi));
		gi->inst = (struct gf_mig_instance){
			(uint8_t)p, (uint8_t)info.placement.start, false
		};
		gi->profile = g->model->profiles[p].name;
		gi->id = info.id;
		gi->handle = gis[k];
	}
	return 0;
}

/* MIG devices: each one's GPU instance gets its UUID, a count, and busy
 * when a compute process runs on it. */
static void read_mig_devices(const struct gf_nvml *nv,
			     struct gf_mig_gpu_state *g)
{
	unsigned max = 0;
	if (nv->nvmlDeviceGetMaxMigDeviceCount(g->dev, &max) != NVML_SUCCESS)
		return;
	if (max > GF_MIG_STATE_MAX_MIG_DEVICES)
		max = GF_MIG_STATE_MAX_MIG_DEVICES;
	for (unsigned k = 0; k < max; k++) {
		nvmlDevice_t mig;
		unsigned giid, np = 0;
		if (nv->nvmlDeviceGetMigDeviceHandleByIndex(g->dev, k, &mig) !=
			    NVML_SUCCESS ||
		    nv->nvmlDeviceGetGpuInstanceId(mig, &giid) != NVML_SUCCESS)
			continue;
		struct gf_mig_gi_state *gi = NULL;
		for (int i = 0; i < g->n && !gi; i++)
			if (g->gi[i].id == giid)
				gi = &g->gi[i];
		if (!gi)
			continue; /* of a profile our table lacks */
		if (gi->nmig++ == 0 &&
		    nv->nvmlDeviceGetUUID(mig, gi->uuid, sizeof(gi->uuid)) !=
			    NVML_SUCCESS)
			gi->uuid[0] = '\0';
		nvmlReturn_t r = nv->nvmlDeviceGetComputeRunningProcesses(
			mig, &np, NULL);
		if (r == NVML_ERROR_INSUFFICIENT_SIZE ||
		    (r == NVML_SUCCESS && np > 0))
			gi->inst.busy = true;
	}
}

/* Profile ids and instances of a GPU in MIG mode. */
static int read_instances(const struct gf_nvml *nv, struct gf_mig_gpu_state *g,
			  struct gf_err *e)
{
	const struct gf_mig_model *m = g->model;
	for (int p = 0; p < m->nprofiles; p++) {
		nvmlGpuInstanceProfileInfo_t info;
		g->profile_id[p] = UINT_MAX;
		if (nv->nvmlDeviceGetGpuInstanceProfileInfo(
			    g->dev, m->profiles[p].nvml_enum, &info) !=
		    NVML_SUCCESS)
			continue;
		g->profile_id[p] = info.id;
		int rc = read_profile(nv, g, p, info.id, e);
		if (rc)
			return rc;
	}
	read_mig_devices(nv, g);
	struct gf_mig_layout l;
	gf_mig_state_layout(g, &l);
	char msg[120];
	if (gf_mig_layout_check(m, &l, msg, sizeof(msg)) != 0)
		return gf_err_set(e, GF_EINVAL,
				  "GPU %u: the driver reports a layout our "
				  "%s table rejects: %s",
				  g->index, m->id, msg);
	return 0;
}

int gf_mig_state_refresh(const struct gf_nvml *nv, struct gf_mig_gpu_state *g,
			 struct gf_err *e)
{
	g->n = 0;
	g->error[0] = '\0';
	g->mode = g->pending = 0;
	nvmlReturn_t r =
		nv->nvmlDeviceGetMigMode(g->dev, &g->mode, &g->pending);
	gf_log(GF_LOG_DEBUG, "mig",
	       "state: gpu=%u nvmlDeviceGetMigMode = %d (current %u, pending "
	       "%u)",
	       g->index, (int)r, g->mode, g->pending);
	g->mig_supported = r == NVML_SUCCESS;
	if (!g->mig_supported)
		g->mode = g->pending = 0;
	if (!g->model)
		return 0;
	/* MIG off: no instances, and NVML names no profile ids; our
	 * table's stand in (a dry run lists them) */
	for (int p = 0; p < g->model->nprofiles; p++)
		g->profile_id[p] = g->model->profiles[p].profile_id;
	if (g->mode != NVML_DEVICE_MIG_ENABLE)
		return 0;
	struct gf_err ge;
	gf_err_clear(&ge);
	int rc = read_instances(nv, g, &ge);
	if (rc) {
		g->n = 0;
		gf_note(g->error, sizeof(g->error), "%s", ge.msg);
		return gf_err_set(e, rc, "%s", ge.msg);
	}
	int nbusy = 0;
	for (int i = 0; i < g->n; i++)
		nbusy += g->gi[i].inst.busy;
	gf_log(GF_LOG_DEBUG, "mig",
	       "state: gpu=%u read %d GPU instance%s (%d busy) with "
	       "nvmlDeviceGetGpuInstances",
	       g->index, g->n, g->n == 1 ? "" : "s", nbusy);
	return 0;
}

int gf_mig_state_read_gpu(const struct gf_nvml *nv, unsigned index,
			  struct gf_mig_gpu_state *g, struct gf_err *e)
{
	struct gf_err ge;
	gf_err_clear(&ge);
	int rc = identify(nv, index, g, &ge);
	if (rc) {
		gf_note(g->error, sizeof(g->error), "%s", ge.msg);
		return gf_err_set(e, rc, "%s", ge.msg);
	}
	return gf_mig_state_refresh(nv, g, e);
}

int gf_mig_state_read(struct gf_mig_node_state *s, struct gf_err *e)
{
	memset(s, 0, sizeof(*s));
	const struct gf_nvml *nv;
	int rc = gf_nvml_open(&nv, e);
	if (rc)
		return rc;
	unsigned count = 0;
	nvmlReturn_t r = nv->nvmlDeviceGetCount(&count);
	if (r != NVML_SUCCESS)
		rc = gf_err_set(e, GF_ENVML, "cannot count GPUs: %s",
				gf_nvml_strerror(nv, r));
	else if (count > GF_MIG_STATE_MAX_GPUS)
		rc = gf_err_set(e, GF_ETOOBIG,
				"NVML reports %u GPUs, more than the %d read",
				count, GF_MIG_STATE_MAX_GPUS);
	if (rc == 0 && count > 0)
		s->gpus = gf_calloc(count, sizeof(*s->gpus));
	/* a GPU that cannot be read keeps its error in ->error */
	for (unsigned i = 0; rc == 0 && i < count; i++, s->ngpus++)
		if (gf_mig_state_read_gpu(nv, i, &s->gpus[i], NULL) != 0)
			continue; /* (gcc warns on a (void) cast) */
	gf_nvml_close();
	return rc;
}

void gf_mig_state_release(struct gf_mig_node_state *s)
{
	gf_free(s->gpus);
	s->ngpus = 0;
}

void gf_mig_state_layout(const struct gf_mig_gpu_state *g,
			 struct gf_mig_layout *l)
{
	l->n = g->n;
	for (int i = 0; i < g->n; i++)
		l->inst[i] = g->gi[i].inst;
}

bool gf_mig_state_is_busy(const struct gf_mig_gpu_state *g)
{
	for (int i = 0; i < g->n; i++)
		if (g->gi[i].inst.busy)
			return true;
	return false;
}
