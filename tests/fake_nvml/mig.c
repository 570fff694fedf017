/*
 * mig.c - the fake NVML's MIG (fake_nvml.c says how a fixture lays it
 * out and what the driver refuses): the GPU and compute instances of
 * each GPU, placed as the driver places them, and the MIG entry points.
 * The pool of instances is this file's; the loader adds the fixture's
 * instances with fake_add_gi and forgets them with mig_reset.
 */
#include <stdio.h>
#include <string.h>

#include "fake.h"

static struct fake_gi gi_pool[MAX_GPUS * MAX_GI];

void mig_reset(void)
{
	memset(gi_pool, 0, sizeof(gi_pool));
}

static const struct gip *find_gip(struct nvmlDevice_st *g, unsigned id)
{
	if (!g->set)
		return NULL;
	for (int i = 0; i < g->set->n; i++)
		if (g->set->p[i].id == id)
			return &g->set->p[i];
	return NULL;
}

static struct fake_gi *new_gi(struct nvmlDevice_st *g)
{
	for (int s = 0; s < MAX_GI; s++)
		if (!g->gis[s]) {
			for (size_t k = 0;
			     k < sizeof(gi_pool) / sizeof(gi_pool[0]); k++)
				if (!gi_pool[k].used) {
					memset(&gi_pool[k], 0,
					       sizeof(gi_pool[k]));
					gi_pool[k].used = 1;
					g->gis[s] = &gi_pool[k];
					return &gi_pool[k];
				}
		}
	return NULL;
}

static unsigned used_mask(struct nvmlDevice_st *g)
{
	unsigned m = 0;
	for (int s = 0; s < MAX_GI; s++)
		if (g->gis[s])
			m |= ((1u << g->gis[s]->prof->mem) - 1)
			     << g->gis[s]->start;
	return m;
}

static int count_of(struct nvmlDevice_st *g, const struct gip *p)
{
	int n = 0;
	for (int s = 0; s < MAX_GI; s++)
		n += g->gis[s] && g->gis[s]->prof == p;
	return n;
}

static nvmlReturn_t place_gi(struct nvmlDevice_st *g, const struct gip *p,
			     unsigned start, struct fake_gi **out)
{
	if (!(p->starts >> start & 1))
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned span = ((1u << p->mem) - 1) << start;
	if ((used_mask(g) & span) || count_of(g, p) >= (int)p->max)
		return NVML_ERROR_INSUFFICIENT_RESOURCES;
	struct fake_gi *gi = new_gi(g);
	if (!gi)
		return NVML_ERROR_INSUFFICIENT_RESOURCES;
	gi->gpu = g;
	gi->prof = p;
	gi->start = start;
	gi->id = ++g->next_gi_id;
	gi->migdev.is_mig = 1;
	gi->migdev.mig_gi = gi;
	snprintf(gi->migdev.uuid, sizeof(gi->migdev.uuid),
		 "MIG-fa4e0000-%04x-4000-8000-%012x", (unsigned)(g - gpus),
		 gi->id);
	gi->ci.gi = gi;
	*out = gi;
	return NVML_SUCCESS;
}

void fake_add_gi(struct nvmlDevice_st *g, unsigned id, unsigned start, int busy,
		 unsigned pid)
{
	const struct gip *p = find_gip(g, id);
	struct fake_gi *gi;
	if (p && place_gi(g, p, start, &gi) == NVML_SUCCESS) {
		gi->has_ci = 1;
		gi->busy = busy;
		gi->pid = pid ? pid : 4242;
	}
}

/* ---- MIG ---- */

#define GI(h) ((struct fake_gi *)(void *)(h))

nvmlReturn_t nvmlDeviceSetMigMode(nvmlDevice_t d, unsigned mode,
				  nvmlReturn_t *act);
nvmlReturn_t nvmlDeviceSetMigMode(nvmlDevice_t d, unsigned mode,
				  nvmlReturn_t *act)
{
	CHECK_DEV(d);
	nvmlReturn_t r = NVML_SUCCESS;
	if (!d->has_mig)
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS && mode == 0)
		for (int s = 0; s < MAX_GI; s++)
			if (d->gis[s])
				r = NVML_ERROR_IN_USE;
	if (r == NVML_SUCCESS) {
		d->mig_pend = (int)mode;
		if (!d->reset_required)
			d->mig_cur = (int)mode;
		*act = NVML_SUCCESS;
	}
	call_log("nvmlDeviceSetMigMode gpu=%d mode=%u = %d", gpu_index(d), mode,
		 (int)r);
	return r;
}

nvmlReturn_t
nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t d, unsigned profile,
				    nvmlGpuInstanceProfileInfo_t *info);
nvmlReturn_t
nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t d, unsigned profile,
				    nvmlGpuInstanceProfileInfo_t *info)
{
	CHECK_DEV(d);
	if (!d->set || d->mig_cur != 1)
		return NVML_ERROR_NOT_SUPPORTED;
	for (int i = 0; i < d->set->n; i++)
		if (d->set->p[i].enumv == profile) {
			memset(info, 0, sizeof(*info));
			info->id = d->set->p[i].id;
			info->sliceCount = d->set->p[i].compute;
			info->instanceCount = d->set->p[i].max;
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t d, unsigned id,
				       nvmlGpuInstance_t *gis, unsigned *count);
nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t d, unsigned id,
				       nvmlGpuInstance_t *gis, unsigned *count)
{
	CHECK_DEV(d);
	unsigned n = 0;
	for (int s = 0; s < MAX_GI; s++)
		if (d->gis[s] && d->gis[s]->prof->id == id) {
			if (n >= *count)
				return NVML_ERROR_INSUFFICIENT_SIZE;
			gis[n++] = (nvmlGpuInstance_t)(void *)d->gis[s];
		}
	*count = n;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t h,
				    nvmlGpuInstanceInfo_t *info);
nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t h,
				    nvmlGpuInstanceInfo_t *info)
{
	struct fake_gi *gi = GI(h);
	if (!gi || !gi->used)
		return NVML_ERROR_INVALID_ARGUMENT;
	info->device = gi->gpu;
	info->id = gi->id;
	info->profileId = gi->prof->id;
	info->placement.start = gi->start;
	info->placement.size = gi->prof->mem;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t d, unsigned id,
					 const nvmlGpuInstancePlacement_t *pl,
					 nvmlGpuInstance_t *out);
nvmlReturn_t
nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t d, unsigned id,
					 const nvmlGpuInstancePlacement_t *pl,
					 nvmlGpuInstance_t *out)
{
	CHECK_DEV(d);
	const struct gip *p = find_gip(d, id);
	struct fake_gi *gi;
	nvmlReturn_t r;
	if (d->mig_cur != 1)
		r = NVML_ERROR_NOT_SUPPORTED;
	else if (!p || pl->size != p->mem || pl->start > 7)
		r = NVML_ERROR_INVALID_ARGUMENT;
	else
		r = place_gi(d, p, pl->start, &gi);
	if (r == NVML_SUCCESS)
		*out = (nvmlGpuInstance_t)(void *)gi;
	call_log("nvmlDeviceCreateGpuInstanceWithPlacement gpu=%d id=%u "
		 "start=%u size=%u = %d",
		 gpu_index(d), id, pl->start, pl->size, (int)r);
	return r;
}

/* Without a placement the driver chooses: the highest free start. */
nvmlReturn_t nvmlDeviceCreateGpuInstance(nvmlDevice_t d, unsigned id,
					 nvmlGpuInstance_t *out);
nvmlReturn_t nvmlDeviceCreateGpuInstance(nvmlDevice_t d, unsigned id,
					 nvmlGpuInstance_t *out)
{
	CHECK_DEV(d);
	if (d->mig_cur != 1)
		return NVML_ERROR_NOT_SUPPORTED;
	const struct gip *p = find_gip(d, id);
	if (!p)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int s = 7; s >= 0; s--) {
		struct fake_gi *gi;
		if ((p->starts >> s & 1) &&
		    !(used_mask(d) & (((1u << p->mem) - 1) << s)) &&
		    place_gi(d, p, (unsigned)s, &gi) == NVML_SUCCESS) {
			*out = (nvmlGpuInstance_t)(void *)gi;
			call_log("nvmlDeviceCreateGpuInstance gpu=%d id=%u = 0 "
				 "(start=%d)",
				 gpu_index(d), id, s);
			return NVML_SUCCESS;
		}
	}
	call_log("nvmlDeviceCreateGpuInstance gpu=%d id=%u = %d", gpu_index(d),
		 id, (int)NVML_ERROR_INSUFFICIENT_RESOURCES);
	return NVML_ERROR_INSUFFICIENT_RESOURCES;
}

nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t h);
nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t h)
{
	struct fake_gi *gi = GI(h);
	if (!gi || !gi->used)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t r = gi->has_ci ? NVML_ERROR_IN_USE : NVML_SUCCESS;
	call_log("nvmlGpuInstanceDestroy gpu=%d id=%u start=%u = %d",
		 gpu_index(gi->gpu), gi->prof->id, gi->start, (int)r);
	if (r != NVML_SUCCESS)
		return r;
	for (int s = 0; s < MAX_GI; s++)
		if (gi->gpu->gis[s] == gi)
			gi->gpu->gis[s] = NULL;
	gi->used = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(
	nvmlGpuInstance_t h, unsigned profile, unsigned eng,
	nvmlComputeInstanceProfileInfo_t *info);
nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(
	nvmlGpuInstance_t h, unsigned profile, unsigned eng,
	nvmlComputeInstanceProfileInfo_t *info)
{
	static const unsigned slices[] = { 1, 2, 3, 4, 7, 8, 6 };
	struct fake_gi *gi = GI(h);
	(void)eng;
	if (!gi || !gi->used || profile >= 7 ||
	    slices[profile] > gi->prof->compute)
		return NVML_ERROR_NOT_SUPPORTED;
	memset(info, 0, sizeof(*info));
	info->id = profile;
	info->sliceCount = slices[profile];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t h,
						  unsigned id,
						  nvmlComputeInstance_t *ci);
nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t h,
						  unsigned id,
						  nvmlComputeInstance_t *ci)
{
	struct fake_gi *gi = GI(h);
	if (!gi || !gi->used)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t r =
		gi->has_ci ? NVML_ERROR_INSUFFICIENT_RESOURCES : NVML_SUCCESS;
	call_log("nvmlGpuInstanceCreateComputeInstance gpu=%d gi_start=%u "
		 "ci_profile=%u = %d",
		 gpu_index(gi->gpu), gi->start, id, (int)r);
	if (r != NVML_SUCCESS)
		return r;
	gi->has_ci = 1;
	*ci = &gi->ci;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t h,
						unsigned id,
						nvmlComputeInstance_t *cis,
						unsigned *count);
nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t h,
						unsigned id,
						nvmlComputeInstance_t *cis,
						unsigned *count)
{
	struct fake_gi *gi = GI(h);
	(void)id;
	if (!gi || !gi->used)
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned n = 0;
	if (gi->has_ci && *count > 0)
		cis[n++] = &gi->ci;
	*count = n;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t ci);
nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t ci)
{
	if (!ci || !ci->gi || !ci->gi->has_ci)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t r = ci->gi->busy ? NVML_ERROR_IN_USE : NVML_SUCCESS;
	call_log("nvmlComputeInstanceDestroy gpu=%d gi_start=%u = %d",
		 gpu_index(ci->gi->gpu), ci->gi->start, (int)r);
	if (r != NVML_SUCCESS)
		return r;
	ci->gi->has_ci = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned *n);
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned *n)
{
	CHECK_DEV(d);
	*n = d->set ? 7 : 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned k,
						 nvmlDevice_t *mig);
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned k,
						 nvmlDevice_t *mig)
{
	CHECK_DEV(d);
	unsigned i = 0;
	for (int s = 0; s < MAX_GI; s++)
		if (d->gis[s] && d->gis[s]->has_ci && i++ == k) {
			*mig = &d->gis[s]->migdev;
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t mig, unsigned *id);
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t mig, unsigned *id)
{
	CHECK_DEV(mig);
	if (!mig->is_mig)
		return NVML_ERROR_INVALID_ARGUMENT;
	*id = mig->mig_gi->id;
	return NVML_SUCCESS;
}
