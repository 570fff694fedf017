/*
 * jobs_mig.h - internal to src/core/jobs (jobs_mig.c): MIG instances:
 * validation, placement, release; the engine's holds on GPUs in MIG mode
 * or unhealthy.
 */
#ifndef GF_CORE_JOBS_JOBS_MIG_H
#define GF_CORE_JOBS_JOBS_MIG_H

#include "core/jobs/ctl_impl.h"

/* The MIG model a node states (mig_id) or, for mig_id "", its GPU model
 * implies; *m NULL for none.  GF_EINVAL for an unknown mig_id. */
int gf__mig_model_for(const char *mig_id, const char *gpu_model,
		      const struct gf_mig_model **m);
/* A node's instances against its model: GF_EINVAL (e names node and
 * GPU), GF_ETOOBIG when the profile names would pass GF__MAX_PROFILES
 * (names[0..*nnames) gathers the ones the core lacks). */
int gf__mig_check(const struct gf_ctl *ctl, const char *node, int ngpus,
		  const struct gf_mig_model *m, const char *model_name,
		  const struct gf_ctl_mig *mig, int nmig,
		  char names[][GF_MIG_PROFILE_MAX], int *nnames,
		  struct gf_err *e);
/* Would node i taking the instances mig[0..nmig) touch one in use, or put
 * a GPU in use into MIG mode?  GF_ECONFLICT naming it. */
int gf__mig_conflict(const struct gf_ctl *ctl, int i,
		     const struct gf_ctl_mig *mig, int nmig, struct gf_err *e);
/* Node i's instances become ctl->nodes.cfg[i].mig (users kept where an
 * instance stays); its GPUs in MIG mode held; profiles listed. */
void gf__mig_install(struct gf_ctl *ctl, int i);
int gf__mig_offered(const struct gf_ctl *ctl, int node, int prof);
/* Does node i offer exactly the instances mig[0..nmig)? */
bool gf__mig_same(const struct gf_ctl *ctl, int i, const struct gf_ctl_mig *mig,
		  int nmig);
void gf__mig_free(struct gf_ctl *ctl);
int gf__prof_find(const struct gf_ctl *ctl, const char *name);
int gf__mig_free_on(const struct gf_ctl *ctl, int node, int prof);
int gf__mig_take(struct gf_ctl *ctl, int node, int prof, int user);
int gf__mig_find(const struct gf_ctl *ctl, int node, int gpu, int start);
void gf__mig_give(struct gf_ctl *ctl, int inst);
/* The engine holds node i's GPUs in MIG mode and its unhealthy ones,
 * no other; the block's figures follow. */
void gf__gpu_sync(struct gf_ctl *ctl, int i);

#endif
