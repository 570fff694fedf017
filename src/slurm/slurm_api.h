/*
 * slurm_api.h - slurmctld's view of the cluster through libslurm: nodes
 * (slurm_load_node), partitions (slurm_load_partitions, for each node's
 * partitions, which slurmctld does not send with the nodes) and jobs
 * (slurm_load_jobs), into a snapshot (snapshot.h).
 *
 * libslurm is opened at run time (dlopen) under the soname of the
 * libslurm-dev gpufleet was built against, and its API version is
 * checked against the header's, because the structures it returns change
 * between Slurm releases.  A gpufleet built without libslurm-dev, or run
 * where that library is absent, says so (GF_ENOTSUP) and the saved
 * scontrol output still works.
 */
#ifndef GF_SLURM_SLURM_API_H
#define GF_SLURM_SLURM_API_H

#include <gpufleet/err.h>

#include "slurm/snapshot.h"

/*
 * Fill s from slurmctld (SLURM_CONF, or the default slurm.conf, says
 * where it is).  GF_ENOTSUP (no libslurm, or another version),
 * GF_ENOTFOUND (slurmctld unreachable, with Slurm's own message), or
 * GF_ETOOBIG / GF_EPARSE for what cannot be kept.
 */
int gf_slurm_api_load(struct gf_slurm_snapshot *s,
		      struct gf_err *e) GF_MUST_CHECK;

#endif
