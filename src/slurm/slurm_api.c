/*
 * slurm_api.c - slurmctld's nodes, partitions and jobs through libslurm, opened
 * at run time (slurm_api.h).  The calls are those scontrol makes for `show
 * node` and `show job` (slurm_load_node, slurm_load_partitions with
 * slurm_populate_node_partitions, slurm_load_jobs), and a node's
 * allocated CPUs come from slurm_get_select_nodeinfo(...,
 * SELECT_NODEDATA_SUBCNT, NODE_STATE_ALLOCATED), as sinfo reads them in
 * 22.05 (the node record has no such field before 23.02).
 *
 * Built with GF_HAVE_SLURM (the Makefile sets it, with GF_SLURM_SONAME,
 * where libslurm-dev is installed); otherwise every call says how to get
 * it.  The library is opened once and never closed (its atexit handlers
 * stay valid).
 */
#include "slurm/slurm_api.h"

#include <stdio.h>
#include <string.h>

#include "util/fmt.h"

#if defined(GF_HAVE_SLURM) && GF_HAVE_SLURM
#include <dlfcn.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

typedef void (*init_fn)(const char *);
typedef int (*load_node_fn)(time_t, node_info_msg_t **, uint16_t);
typedef void (*free_node_fn)(node_info_msg_t *);
typedef int (*load_part_fn)(time_t, partition_info_msg_t **, uint16_t);
typedef void (*free_part_fn)(partition_info_msg_t *);
typedef void (*populate_fn)(node_info_msg_t *, partition_info_msg_t *);
typedef int (*load_jobs_fn)(time_t, job_info_msg_t **, uint16_t);
typedef void (*free_jobs_fn)(job_info_msg_t *);
typedef int (*select_fn)(dynamic_plugin_data_t *, enum select_nodedata_type,
			 enum node_states, void *);
typedef int (*errno_fn)(void);
typedef char *(*strerror_fn)(int);

static struct {
	void *h;
	init_fn init;
	load_node_fn load_node;
	free_node_fn free_node;
	load_part_fn load_part;
	free_part_fn free_part;
	populate_fn populate;
	load_jobs_fn load_jobs;
	free_jobs_fn free_jobs;
	select_fn select;
	errno_fn get_errno;
	strerror_fn strerr;
} L;

static int open_lib(struct gf_err *e)
{
	if (L.h)
		return 0;
	void *h = dlopen(GF_SLURM_SONAME, RTLD_NOW | RTLD_GLOBAL);
	if (!h)
		return gf_err_set(e, GF_ENOTSUP,
				  "cannot open %s (gpufleet was built for "
				  "Slurm %d.%02d): %s; save `scontrol -o show "
				  "node` and `scontrol -d -o show job` and "
				  "give them with --nodes-file, --jobs-file",
				  GF_SLURM_SONAME,
				  SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
				  SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER),
				  dlerror());
		/* POSIX guarantees data and function pointers convert. */
#define SYM(field, name)                                                    \
	do {                                                                \
		void *p_ = dlsym(h, name);                                  \
		if (!p_) {                                                  \
			dlclose(h);                                         \
			return gf_err_set(e, GF_ENOTSUP,                    \
					  "%s has no %s: not the libslurm " \
					  "gpufleet was built for",         \
					  GF_SLURM_SONAME, name);           \
		}                                                           \
		memcpy(&L.field, &p_, sizeof(p_));                          \
	} while (0)
	SYM(init, "slurm_init");
	SYM(load_node, "slurm_load_node");
	SYM(free_node, "slurm_free_node_info_msg");
	SYM(load_part, "slurm_load_partitions");
	SYM(free_part, "slurm_free_partition_info_msg");
	SYM(populate, "slurm_populate_node_partitions");
	SYM(load_jobs, "slurm_load_jobs");
	SYM(free_jobs, "slurm_free_job_info_msg");
	SYM(select, "slurm_get_select_nodeinfo");
	SYM(get_errno, "slurm_get_errno");
	SYM(strerr, "slurm_strerror");
#undef SYM
	L.init(NULL);
	L.h = h;
	return 0;
}

static int slurm_fail(const char *call, struct gf_err *e)
{
	int err = L.get_errno();
	return gf_err_set(e, GF_ENOTFOUND, "%s failed: %s", call,
			  L.strerr(err));
}

static bool node_unusable(uint32_t st)
{
	uint32_t base = st & NODE_STATE_BASE;
	return base == NODE_STATE_DOWN || base == NODE_STATE_FUTURE ||
	       base == NODE_STATE_UNKNOWN || (st & NODE_STATE_DRAIN) ||
	       (st & NODE_STATE_FAIL) || (st & NODE_STATE_NO_RESPOND) ||
	       (st & NODE_STATE_INVALID_REG);
}

/* v (NULL: "") into a field of one's record; GF_ETOOBIG said when it
 * does not fit. */
static int field(char *dst, size_t cap, const char *what, const char *v,
		 struct gf_err *e)
{
	if (gf_fmt(dst, cap, "%s", v ? v : "") == 0)
		return 0;
	return gf_err_set(e, GF_ETOOBIG, "%s '%.40s...' longer than %zu bytes",
			  what, v, cap - 1);
}

static int add_node(struct gf_slurm_snapshot *s, node_info_t *ni,
		    struct gf_err *e)
{
	struct gf_slurm_node n;
	memset(&n, 0, sizeof(n));
	int rc;
	if ((rc = field(n.name, sizeof(n.name), "node name", ni->name, e)) ||
	    (rc = field(n.partitions, sizeof(n.partitions), "node partitions",
			ni->partitions, e)))
		return rc;
	n.cpus = ni->cpus;
	uint16_t alloc = 0;
	if (ni->select_nodeinfo &&
	    L.select(ni->select_nodeinfo, SELECT_NODEDATA_SUBCNT,
		     NODE_STATE_ALLOCATED, &alloc) == 0)
		n.cpus_alloc = alloc;
	int cnt;
	uint64_t idx;
	if (gf_slurm_parse_gres(ni->gres, &n.ngpus, n.gpu_type,
				sizeof(n.gpu_type), &idx) ||
	    gf_slurm_parse_gres(ni->gres_used, &cnt, NULL, 0, &n.used) ||
	    n.ngpus > GF_SLURM_GPUS_MAX || (n.ngpus < 64 && n.used >> n.ngpus))
		return gf_err_set(e, GF_EPARSE,
				  "node %s: cannot read its GRES '%s' (used "
				  "'%s')",
				  n.name, ni->gres ? ni->gres : "",
				  ni->gres_used ? ni->gres_used : "");
	n.unusable = node_unusable(ni->node_state);
	gf_note(n.state, sizeof(n.state), "%s", n.unusable ? "unusable" : "up");
	if (gf_slurm_snapshot_add_node(s, &n) < 0)
		return gf_err_set(e, GF_ETOOBIG, "more than %d nodes",
				  GF_SLURM_NODES_MAX);
	return 0;
}

static int add_job(struct gf_slurm_snapshot *s, slurm_job_info_t *ji,
		   struct gf_err *e)
{
	uint32_t st = ji->job_state & JOB_STATE_BASE;
	if (st != JOB_PENDING && st != JOB_RUNNING)
		return 0;
	struct gf_slurm_job j;
	memset(&j, 0, sizeof(j));
	j.id = ji->job_id;
	j.pending = st == JOB_PENDING;
	j.priority = ji->priority;
	j.nodes = ji->num_nodes ? (int)ji->num_nodes : 1;
	j.cpus_per_node = (int)((ji->num_cpus + (uint32_t)j.nodes - 1) /
				(uint32_t)j.nodes);
	int rc;
	if ((rc = field(j.partition, sizeof(j.partition), "job partition",
			ji->partition, e)) ||
	    (rc = field(j.nodelist, sizeof(j.nodelist), "job node list",
			ji->nodes, e)))
		return rc;
	int n = 0;
	if (gf_slurm_parse_tres_gpus(ji->tres_per_node, &n, j.gpu_type,
				     sizeof(j.gpu_type)) == 0 &&
	    n > 0)
		j.gpus_per_node = n;
	else if (gf_slurm_parse_tres_gpus(ji->tres_per_job, &n, j.gpu_type,
					  sizeof(j.gpu_type)) == 0 &&
		 n > 0)
		j.gpus_per_node = (n + j.nodes - 1) / j.nodes;
	if (gf_slurm_snapshot_add_job(s, &j) < 0)
		return gf_err_set(e, GF_ETOOBIG, "more than %d jobs",
				  GF_SLURM_JOBS_MAX);
	return 0;
}

int gf_slurm_api_load(struct gf_slurm_snapshot *s, struct gf_err *e)
{
	int rc = open_lib(e);
	if (rc)
		return rc;
	node_info_msg_t *nodes = NULL;
	partition_info_msg_t *parts = NULL;
	job_info_msg_t *jobs = NULL;
	if (L.load_node(0, &nodes, SHOW_ALL | SHOW_DETAIL) != 0)
		return slurm_fail("slurm_load_node", e);
	if (L.load_part(0, &parts, SHOW_ALL) != 0) {
		rc = slurm_fail("slurm_load_partitions", e);
		goto out;
	}
	L.populate(nodes, parts);
	for (uint32_t i = 0; rc == 0 && i < nodes->record_count; i++)
		if (nodes->node_array[i].name)
			rc = add_node(s, &nodes->node_array[i], e);
	if (rc == 0 && L.load_jobs(0, &jobs, SHOW_ALL | SHOW_DETAIL) != 0)
		rc = slurm_fail("slurm_load_jobs", e);
	for (uint32_t i = 0; rc == 0 && jobs && i < jobs->record_count; i++)
		rc = add_job(s, &jobs->job_array[i], e);
	gf_note(s->source, sizeof(s->source), "slurmctld through %s",
		GF_SLURM_SONAME);
out:
	if (jobs)
		L.free_jobs(jobs);
	if (parts)
		L.free_part(parts);
	L.free_node(nodes);
	return rc;
}

#else

int gf_slurm_api_load(struct gf_slurm_snapshot *s, struct gf_err *e)
{
	(void)s;
	return gf_err_set(e, GF_ENOTSUP,
			  "gpufleet was built without libslurm-dev: give "
			  "the saved output of `scontrol -o show node` and "
			  "`scontrol -d -o show job` with --nodes-file, "
			  "--jobs-file (or rebuild with libslurm-dev "
			  "installed)");
}

#endif
