/*
 * cgroup.h - who owns a GPU process: the Kubernetes pod and container, or
 * the Slurm job, as its cgroup path says (/proc/PID/cgroup).  Pure
 * parsing of the path text; reading the file is the caller's.
 *
 * Recognised (cgroup v1 and v2, cgroupfs and systemd drivers):
 *   .../kubepods/burstable/pod<UID>/<CONTAINER>
 *   .../kubepods-burstable-pod<UID_WITH_UNDERSCORES>.slice/
 *       cri-containerd-<ID>.scope (also docker-, crio-)
 *   .../slurm/uid_<U>/job_<ID>/step_<S>   .../slurmstepd.scope/job_<ID>/...
 */
#ifndef GF_TELEMETRY_CGROUP_H
#define GF_TELEMETRY_CGROUP_H

#include <stdbool.h>

struct gf_owner {
	char pod_uid[40];   /* "" when not a pod */
	char container[72]; /* container id */
	char slurm_job[24]; /* "" when not a Slurm job */
};

/* Parse the contents of /proc/PID/cgroup; true when an owner was found. */
bool gf_cgroup_owner(const char *text, struct gf_owner *out);

#endif
