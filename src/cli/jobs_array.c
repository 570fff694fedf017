/*
 * jobs_array.c - an array as one line of `gpufleet jobs` (issue 21), as
 * squeue shows "12_[0-31%4]": its id, index range and %max, the state that
 * matters most of its tasks (running, then pending, failed, cancelled,
 * succeeded) and how many tasks are in each state; `--expand` lists
 * every task instead.  The columns are cmd_jobs.c's table's.
 */
#include <stdio.h>
#include <string.h>

#include <gpufleet/job.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "util/fmt.h"

/* Job k's array id, or NULL. */
static const char *array_of(const struct gf_jv *jobs, size_t k)
{
	return gf_jv_str(gf_jv_get(gf_jv_at(jobs, k), "array_job_id"));
}

/* The most telling state first. */
static const char *const order[] = { "running", "pending", "failed",
				     "cancelled", "succeeded" };
#define NSTATES (sizeof(order) / sizeof(order[0]))

bool gf_cli_jobs_array(const struct gf_jv *jobs, size_t i)
{
	const char *aid = array_of(jobs, i);
	if (aid == NULL || !aid[0])
		return false;
	for (size_t k = 0; k < i; k++) {
		const char *o = array_of(jobs, k);
		if (o && !strcmp(o, aid))
			return true; /* its line is printed */
	}
	int count[NSTATES] = { 0 };
	int64_t lo = -1, hi = -1, max = 0;
	for (size_t k = i; k < gf_jv_len(jobs); k++) {
		const char *o = array_of(jobs, k);
		if (!o || strcmp(o, aid))
			continue;
		const struct gf_jv *t = gf_jv_at(jobs, k);
		int64_t x = gf_remote_num(t, "array_task_id");
		lo = lo < 0 || x < lo ? x : lo;
		hi = x > hi ? x : hi;
		max = gf_remote_num(t, "array_max");
		for (size_t s = 0; s < NSTATES; s++)
			count[s] +=
				!strcmp(gf_remote_str(t, "state"), order[s]);
	}
	char id[GF_JOB_ID_MAX + 32], counts[160] = "";
	const char *state = "-";
	size_t at = 0;
	for (size_t s = 0; s < NSTATES; s++) {
		if (count[s] == 0)
			continue;
		if (state[0] == '-')
			state = order[s];
		gf_note(counts + at, sizeof(counts) - at, "%s%s %d",
			at ? ", " : "", order[s], count[s]);
		at = strlen(counts);
	}
	char cap[24] = "";
	if (max > 0)
		gf_note(cap, sizeof(cap), "%%%lld", (long long)max);
	gf_note(id, sizeof(id), "%s_[%lld-%lld%s]", aid, (long long)lo,
		(long long)hi, cap);
	const struct gf_jv *j = gf_jv_at(jobs, i);
	printf("%-10s %-16.16s %-10.10s %-10.10s %-10s %11s %-8s %s\n", id,
	       gf_remote_str(j, "name"), gf_remote_str(j, "team"),
	       gf_remote_str(j, "class"), state, "-", "array", counts);
	return true;
}
