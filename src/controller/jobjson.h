/*
 * jobjson.h - jobs as the HTTP API speaks them (issue 10's "Contract for
 * scripts"): a job body into a spec, strictly (an unknown field, a wrong
 * type, a number out of range is an error naming the field), and a job
 * into its JSON object.
 */
#ifndef GF_CONTROLLER_JOBJSON_H
#define GF_CONTROLLER_JOBJSON_H

#include <gpufleet/cluster.h>
#include <gpufleet/ctl.h>
#include <gpufleet/err.h>
#include <gpufleet/job.h>
#include <gpufleet/jobflow.h>

#include "util/json.h"

/*
 * A job body (a parsed JSON object) into spec, with the defaults (team
 * "default", class "batch", one replica, CPU 1000 milli, memory 1024 MiB
 * per replica when absent).  Types and the ranges a field can ever have
 * are checked here (0, or GF_EINVAL with e->msg naming the field); the
 * rest (gf_job_spec_check, and whether it can ever be placed) is
 * gf_ctl_admit's.  spec->command is allocated (release with
 * gf_job_spec_release).  Also "env" ({"NAME": "VALUE"}, at most
 * GF_JOB_ENV_MAX variables and GF_JOB_ENV_BYTES) and "workdir" (an
 * absolute path); "user" comes from the token, never the body.
 */
int gf_jobjson_spec(const struct gf_jv *body, struct gf_job_spec *spec,
		    struct gf_err *e) GF_MUST_CHECK;

/* The body's "array" ("0-31:2%4") into out: 0; 1 when it has none (or
 * null); GF_EINVAL / GF_ETOOBIG with e naming 'array'. */
int gf_jobjson_array(const struct gf_jv *body, struct gf_array_spec *out,
		     struct gf_err *e) GF_MUST_CHECK;
/* A submitted job's command: 0, or GF_EINVAL when it has none or only
 * blanks (a Kubernetes pod's job is the only one without: it never
 * comes through here). */
int gf_jobjson_command_check(const struct gf_job_spec *s,
			     struct gf_err *e) GF_MUST_CHECK;

/*
 * A job as {"id", "name", "state", "team", "class", "replicas", the spec's
 * other fields, "reason", "submitted", "started", "ended" (RFC 3339 or
 * null), "attempts", "exit_code", "gpu_seconds", "placement": [{"node",
 * "gpus": [...], "gpu_milli", "mig_profile", "block"}], "completing",
 * "runs": [{"attempt", "replica", "node", "gpus", "gpu_uuids",
 * "mig_uuid", "started", "ended", "exit_code", "reason"}]}.  runs: the
 * job's (ended_ms 0: not ended, "ended" and "exit_code" null), by attempt
 * and replica; a final job's placement is its last attempt's runs.  key:
 * NULL inside an array.  cfg gives the block names (may be NULL).
 */
void gf_jobjson_write(struct gf_json *j, const char *key,
		      const struct gf_job *job, const struct gf_ctl_config *cfg,
		      const struct gf_job_run *runs, int nruns);

#endif
