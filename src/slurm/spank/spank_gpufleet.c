/*
 * spank_gpufleet.c - the SPANK plugin spank_gpufleet.so: binds each task
 * of a Slurm job step to the CPUs and NUMA memory local to its GPUs and
 * names the NIC beside them (NCCL_IB_HCA, UCX_NET_DEVICES), with the bind
 * planner of `gpufleet bind` (docs/slurm.md installs it).
 *
 *   plugstack.conf:  optional /path/spank_gpufleet.so [default=MODE]
 *                    [topology=FILE] [nvml=0|1]
 *                    (all or nothing: one bad argument disables the
 *                    plugin, each named in the error)
 *
 * NVML is not loaded unless nvml=1: hwloc finds the GPUs on their PCI
 * bus, and an nvmlInit without the persistence daemon can take seconds,
 * at every step.  nvml=1 is for nodes whose CUDA_VISIBLE_DEVICES holds
 * UUIDs (MIG devices), which only NVML names.
 *   srun/sbatch:     --gpufleet-bind=[verbose,][strict,]closest|nic|none
 *
 * Hooks (spank(8); contexts as Slurm 22.05 runs them):
 *   slurm_spank_init       all contexts: registers the option (the way
 *                          that also works for sbatch and salloc) and
 *                          reads the plugstack arguments;
 *   slurm_spank_user_init  slurmstepd, once per step, before the tasks
 *                          fork: loads this node's topology once, when the
 *                          step has GPUs and a mode that binds;
 *   slurm_spank_task_init  each task, as the user, just before exec: the
 *                          plan, then sched_setaffinity and the memory
 *                          policy through hwloc, then the variables.  Done
 *                          here and not in task_init_privileged because
 *                          task/affinity sets its own mask after that
 *                          hook (../shared/reference/slurm.md 0.6).
 *
 * Failure never fails a job by itself: when the topology cannot be read
 * or a GPU is unknown, one line goes to slurmd's log (and the task's
 * stderr with verbose) and the task keeps Slurm's binding.  Only
 * --gpufleet-bind=strict,... makes such a task fail (task_init returns
 * an error, which Slurm turns into the task's failure), never user_init
 * (whose failure would drain the node under sbatch).
 */
#include <slurm/spank.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/taskbind.h"
#include "topo/hwloc_load.h"
#include "topo/source.h"
#include "util/fmt.h"

/* plugin_name, plugin_type, plugin_version, spank_plugin_version */
/* cppcheck-suppress unknownMacro */
SPANK_PLUGIN(gpufleet, 1)

#define ENV_MAX 4096

static struct {
	struct gf_tb_args args; /* plugstack.conf: default=, topology=, nvml= */
	bool disabled;		/* a bad argument: the plugin does nothing */
	struct gf_tb_opts opt;	/* --gpufleet-bind */
	bool opt_given;
	struct gf_node *node; /* loaded in user_init */
	bool failed;	      /* could not load or plan: said once */
	char failure[600];
} G;

static int opt_cb(int val, const char *optarg, int remote)
{
	(void)val;
	char why[256];
	struct gf_tb_opts o;
	/* sbatch passes an option given without value as "(null)" */
	if (gf_tb_parse(optarg, &o, why, sizeof(why)) != 0) {
		if (!remote)
			fprintf(stderr, "--gpufleet-bind: %s\n", why);
		else
			slurm_error("gpufleet: --gpufleet-bind: %s", why);
		return -1;
	}
	G.opt = o;
	G.opt_given = true;
	return 0;
}

/* spank_option wants char *, not const char * */
static char opt_name[] = "gpufleet-bind";
static char opt_arg[] = "[verbose,][strict,]closest|nic|none";
static char opt_usage[] = "bind each task to the CPUs, memory and NIC "
			  "local to its GPUs (gpufleet); strict: fail the "
			  "task when it cannot";

static struct spank_option bind_option = {
	.name = opt_name,
	.arginfo = opt_arg,
	.usage = opt_usage,
	.has_arg = 1,
	.val = 0,
	.cb = opt_cb,
};

static void say_arg(void *ctx, const char *msg)
{
	(void)ctx;
	slurm_error("gpufleet: plugstack.conf: %s", msg);
}

/*
 * The arguments, all or nothing (gf_tb_args): with any bad one the
 * plugin disables itself, and says so.  Under `optional` Slurm ignores
 * the error and goes on calling the hooks, which then do nothing; under
 * `required` the error fails the launch (spank(8)).  The option stays
 * registered either way, so that jobs naming it are not refused for an
 * option Slurm does not know.
 */
int slurm_spank_init(spank_t sp, int ac, char **av)
{
	if (spank_option_register(sp, &bind_option) != ESPANK_SUCCESS)
		slurm_error("gpufleet: cannot register --gpufleet-bind");
	int bad =
		gf_tb_args(ac, (const char *const *)av, &G.args, say_arg, NULL);
	G.disabled = bad > 0;
	if (bad)
		slurm_error("gpufleet: plugstack.conf: %d bad argument%s: the "
			    "plugin is disabled, tasks run as Slurm binds them",
			    bad, bad > 1 ? "s" : "");
	return bad ? -1 : 0;
}

static const struct gf_tb_opts *mode(void)
{
	static const struct gf_tb_opts off = { .mode = GF_TB_NONE };
	if (G.disabled)
		return &off;
	return G.opt_given ? &G.opt : &G.args.def;
}

static bool env(spank_t sp, const char *name, char *buf, int size)
{
	return spank_getenv(sp, name, buf, size) == ESPANK_SUCCESS && *buf;
}

/* The step's GPU list: SLURM_STEP_GPUS, or SLURM_JOB_GPUS (batch). */
static bool step_gpus(spank_t sp, char *buf, int size)
{
	return env(sp, "SLURM_STEP_GPUS", buf, size) ||
	       env(sp, "SLURM_JOB_GPUS", buf, size);
}

__attribute__((format(printf, 2, 3))) static void
say_failure(spank_t sp, const char *fmt, ...)
{
	uint32_t job = 0, step = 0;
	spank_get_item(sp, S_JOB_ID, &job);
	spank_get_item(sp, S_JOB_STEPID, &step);
	va_list ap;
	va_start(ap, fmt);
	gf_vnote(G.failure, sizeof(G.failure), fmt, ap);
	va_end(ap);
	slurm_info("gpufleet: job %u step %u: %s; binding left to Slurm", job,
		   step, G.failure);
	G.failed = true;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	char gpus[ENV_MAX], cvd[ENV_MAX];
	if (mode()->mode == GF_TB_NONE)
		return 0;
	if (!step_gpus(sp, gpus, sizeof(gpus)) &&
	    !env(sp, "CUDA_VISIBLE_DEVICES", cvd, sizeof(cvd)))
		return 0; /* no GPU: nothing to bind to */
	struct gf_node_source src = {
		.xml = G.args.topology[0] ? G.args.topology : NULL,
		.this_system = true,
		.nvml = G.args.nvml,
	};
	struct gf_err e;
	gf_err_clear(&e);
	/* a recording is checked against this machine (topo/this_system.h):
	 * another machine's is GF_ENOTTHIS, its message naming what differs */
	int rc = gf_node_source_load(&src, &G.node, &e);
	if (rc == GF_ENOTTHIS)
		say_failure(sp, "topology %s", e.msg);
	else if (rc != 0)
		say_failure(sp, "cannot read this node's topology: %s", e.msg);
	return 0; /* never here: a failing user_init drains the node */
}

static void set_env(spank_t sp, const struct gf_bind_plan *p)
{
	for (int i = 0; i < p->nenv; i++) {
		/* Slurm owns the GPU list; a user's own choice stays */
		if (strcmp(p->env_name[i], "CUDA_VISIBLE_DEVICES") == 0 ||
		    strcmp(p->env_name[i], "ROCR_VISIBLE_DEVICES") == 0)
			continue;
		spank_setenv(sp, p->env_name[i], p->env_value[i], 0);
	}
	/* Slurm numbers GPUs in PCI bus order; so does CUDA with this */
	spank_setenv(sp, "CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0);
}

static int fail_task(const struct gf_tb_opts *o, const char *why)
{
	if (o->verbose || o->strict)
		fprintf(stderr, "gpufleet-bind: %s%s\n", why,
			o->strict ? " (strict: the task fails)" : "");
	return o->strict ? -1 : 0;
}

/* The task's GPUs, its plan, and the binding applied. */
static int bind_task(spank_t sp, const struct gf_tb_opts *o)
{
	char step[ENV_MAX] = "", cvd[ENV_MAX] = "", why[600];
	step_gpus(sp, step, sizeof(step));
	env(sp, "CUDA_VISIBLE_DEVICES", cvd, sizeof(cvd));
	struct gf_bind_request r;
	bool whole;
	int rc = gf_tb_task_gpus(G.node, step, cvd[0] ? cvd : NULL, &r, &whole,
				 why, sizeof(why));
	if (rc > 0)
		return 0;
	int task = 0;
	uint32_t ntasks = 1;
	char *cores = NULL;
	spank_get_item(sp, S_TASK_ID, &task);
	spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &ntasks);
	if (spank_get_item(sp, S_STEP_ALLOC_CORES, &cores) != ESPANK_SUCCESS)
		cores = NULL;
	struct gf_tb_result *res = malloc(sizeof(*res));
	if (!res)
		return fail_task(o, "out of memory");
	struct gf_bind_request sg; /* the step's GPUs */
	bool sg_known = step[0] && gf_bind_parse_gpus(step, &sg) == 0;
	if (rc == 0 &&
	    gf_tb_plan_step(G.node, o, &r, sg_known ? &sg : NULL, whole, task,
			    (int)ntasks, cores, res, why, sizeof(why)) != 0)
		rc = -1;
	if (rc < 0) {
		slurm_info("gpufleet: task %d: %s; binding left to Slurm", task,
			   why);
		free(res);
		return fail_task(o, why);
	}
	struct gf_err e;
	gf_err_clear(&e);
	if (res->bind && gf_topo_bind_self(&res->cpus, &res->mems, &e) != 0) {
		gf_note(why, sizeof(why), "task %d: %s", task, e.msg);
		slurm_info("gpufleet: %s; binding left to Slurm", why);
		free(res);
		return fail_task(o, why);
	}
	set_env(sp, &res->plan);
	slurm_verbose("gpufleet: %s", res->say);
	if (o->verbose)
		fprintf(stderr, "gpufleet-bind: %s\n", res->say);
	rc = !res->bind && o->strict && o->mode == GF_TB_CLOSEST
		     ? fail_task(o, res->say)
		     : 0;
	free(res);
	return rc;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	const struct gf_tb_opts *o = mode();
	if (o->mode == GF_TB_NONE || !spank_remote(sp))
		return 0;
	if (G.failed)
		return fail_task(o, G.failure);
	if (!G.node)
		return 0; /* the step has no GPU */
	return bind_task(sp, o);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	if (G.node)
		gf_node_free(G.node);
	G.node = NULL;
	return 0;
}
