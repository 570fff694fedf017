/*
 * usage.h - Slurm's accounting as chargeback usage records.
 *
 * The records come from `sacct --parsable2` (run here, or saved) read by
 * the chargeback's own reader (chargeback.h, gf_cb_read_sacct), so the
 * two never disagree: a job allocation (-X) is a record per node of its
 * NodeList with its AllocTRES split evenly, GPUs from gres/gpu (the type
 * from gres/gpu:TYPE), CPUs and memory as allocated.  That is Slurm's
 * TRES accounting: allocation, never usage, times the elapsed time (what
 * sreport's gres/gpu seconds sum, ../shared/reference/
 * autoscale-chargeback-engines.md B4); a job still running ends now, one
 * never started is not usage.
 *
 * Written out as the records CSV the chargeback reads (docs/chargeback.md:
 * cluster,node,namespace,pod,container,start,end,gpus,cpu_req,cpu_use,
 * ram_req_gib,ram_use_gib,labels,gpu_model): namespace the account, pod
 * the job id, container the user; labels as the sacct reader sets them.
 * Or per job, with its GPU-seconds, as JSON or a table.
 */
#ifndef GF_SLURM_USAGE_H
#define GF_SLURM_USAGE_H

#include <stdint.h>

#include <gpufleet/charge.h>
#include <gpufleet/err.h>

#include "util/buf.h"

/* The fields asked of sacct (-o), those gf_cb_read_sacct reads. */
#define GF_SLURM_SACCT_FIELDS                                              \
	"JobID,Cluster,Account,User,Partition,QOS,JobName,State,NodeList," \
	"Start,End,AllocTRES"

/*
 * Run `TZ=UTC sacct -a -X -P -S SINCE -E UNTIL -o FIELDS` (sacct the
 * program to run, from PATH when it has no '/') with its output into
 * out_path.  0, or GF_ENOTFOUND (cannot run it) / GF_EINVAL (it failed;
 * its own message is on stderr).
 */
int gf_slurm_run_sacct(const char *sacct, int64_t since_ms, int64_t until_ms,
		       const char *out_path, struct gf_err *e) GF_MUST_CHECK;

/* The records CSV of the contract, with labels and gpu_model. */
int gf_slurm_usage_csv(const struct gf_charge_input *in,
		       struct gf_buf *out) GF_MUST_CHECK;

/*
 * One entry per job (its records summed over its nodes): job, cluster,
 * account, user, partition, state, nodes, gpus, gpu_model, start, end,
 * seconds, gpu_seconds; then the total.  JSON, or a text table.
 */
int gf_slurm_usage_json(const struct gf_charge_input *in,
			struct gf_buf *out) GF_MUST_CHECK;
int gf_slurm_usage_table(const struct gf_charge_input *in,
			 struct gf_buf *out) GF_MUST_CHECK;

#endif
