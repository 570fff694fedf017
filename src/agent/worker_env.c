/*
 * worker_env.c - everything a job's process needs, computed before the fork:
 * the assignment checked, the bind plan (CPUs, NUMA memory, nearest NIC)
 * and the environment, as NUL-terminated "NAME=VALUE" strings.
 *
 * The job's environment is built from nothing (the agent's own is never
 * passed on: it may hold tokens), in this order, later names replacing
 * none of the earlier ones:
 *   PATH (a default, unless the assignment gives one)
 *   the assignment's pairs: the job's "env" (names the worker sets
 *     itself are refused: nodeproto's gf_np_env_reserved)
 *   HOME, USER, LOGNAME, SHELL of the user it runs as (its passwd
 *     entry), unless the assignment set that name; PWD, its directory
 *   the planner's NIC variables (NCCL_IB_HCA, NCCL_SOCKET_IFNAME,
 *     UCX_NET_DEVICES), unless the assignment set that name
 *   CUDA_VISIBLE_DEVICES (+ CUDA_DEVICE_ORDER=PCI_BUS_ID for indexes)
 *   GPUFLEET_JOB_ID, GPUFLEET_REPLICA, GPUFLEET_NODE
 *   for a gang: WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT
 *   for an array's task: GPUFLEET_ARRAY_JOB_ID ("j12"),
 *     GPUFLEET_ARRAY_TASK_ID, and Slurm's SLURM_ARRAY_JOB_ID ("12", its
 *     number as Slurm gives it), SLURM_ARRAY_TASK_ID
 * Invariants: every name appears once; p->nenv < GF__ENV_SLOTS.
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/worker_impl.h"
#include "nodeproto/nodeproto.h"
#include "util/buf.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/str.h"

#define GF__ENV_SLOTS (GF_WORKER_ENV_MAX + 40)

static bool is_reserved(const char *name)
{
	return gf_np_env_reserved(name); /* one list, the API's too */
}

static bool valid_env_name(const char *s)
{
	if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (const char *p = s; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_'))
			return false;
	return true;
}

/* s: 1 to max - 1 letters, digits and characters of extra. */
static bool plain(const char *s, size_t max, const char *extra)
{
	size_t len = s ? strlen(s) : 0;
	if (len == 0 || len >= max)
		return false;
	for (const char *p = s; *p; p++)
		if (!(isalnum((unsigned char)*p) || strchr(extra, *p)))
			return false;
	return true;
}

/* UUIDs: "GPU-...", "MIG-..." (also the old "MIG-GPU-u/1/0"). */
static bool valid_uuid(const char *s)
{
	return plain(s, GF_WORKER_UUID_MAX, "-_./:");
}

static bool valid_addr(const char *s)
{
	return plain(s, GF_WORKER_ADDR_MAX, "-_.:[]%");
}

#define BAD(code, ...) gf_err_set(e, code, __VA_ARGS__)

static int check_gang(const struct gf_assignment *a, const char *who,
		      struct gf_err *e)
{
	if (a->world_size < 0 || a->world_size > GF_WORKER_REPLICA_MAX)
		return BAD(GF_EINVAL, "%s: world size %d out of range", who,
			   a->world_size);
	if (a->world_size <= 1)
		return 0;
	if (a->rank < 0 || a->rank >= a->world_size)
		return BAD(GF_EINVAL, "%s: rank %d outside a world of %d", who,
			   a->rank, a->world_size);
	if (a->local_rank < 0 || a->local_rank > a->rank)
		return BAD(GF_EINVAL, "%s: local rank %d with rank %d", who,
			   a->local_rank, a->rank);
	if (!valid_addr(a->master_addr))
		return BAD(GF_EINVAL,
			   "%s: a gang needs a master address (a host name "
			   "or address, < %d bytes)",
			   who, GF_WORKER_ADDR_MAX);
	if (a->master_port < 1 || a->master_port > 65535)
		return BAD(GF_EINVAL, "%s: master port %d out of range", who,
			   a->master_port);
	return 0;
}

static int check_gpus(const struct gf_worker *w, const struct gf_assignment *a,
		      const char *who, struct gf_err *e)
{
	if (a->place.ngpus < 0 || a->place.ngpus > GF_CNODE_MAX_GPUS)
		return BAD(GF_ETOOBIG,
			   "%s: %d GPUs, a placement holds %d at most", who,
			   a->place.ngpus, GF_CNODE_MAX_GPUS);
	if (a->kind != GF_WORKER_GPU_WHOLE) {
		if (a->place.ngpus != 1)
			return BAD(GF_EINVAL,
				   "%s: a share or MIG instance is on one "
				   "GPU, %d given",
				   who, a->place.ngpus);
		if (a->place.gpu_milli < 1 || a->place.gpu_milli > 1000)
			return BAD(GF_EINVAL,
				   "%s: gpu_milli %d: expected 1..1000", who,
				   a->place.gpu_milli);
	}
	if (a->kind == GF_WORKER_GPU_MIG &&
	    (a->mig_uuid == NULL || strncmp(a->mig_uuid, "MIG-", 4) != 0 ||
	     !valid_uuid(a->mig_uuid)))
		return BAD(GF_EINVAL,
			   "%s: a MIG instance needs its 'MIG-...' "
			   "device UUID",
			   who);
	for (int i = 0; i < a->place.ngpus; i++) {
		int g = a->place.gpus[i];
		const char *u = a->gpu_uuids[i];
		if (g < 0 || (w->node && g >= w->node->ngpus) ||
		    g >= GF_MAX_GPUS)
			return BAD(GF_EINVAL, "%s: no GPU %d on this node", who,
				   g);
		for (int k = 0; k < i; k++)
			if (a->place.gpus[k] == g)
				return BAD(GF_EINVAL, "%s: GPU %d given twice",
					   who, g);
		if (u == NULL || u[0] == '\0')
			continue;
		if (!valid_uuid(u))
			return BAD(GF_EINVAL, "%s: GPU %d: bad UUID '%.100s'",
				   who, g, u);
		if (w->node && w->node->gpus[g].uuid[0] &&
		    strcmp(w->node->gpus[g].uuid, u) != 0)
			return BAD(GF_EINVAL,
				   "%s: GPU %d is %s here, the assignment "
				   "says %s",
				   who, g, w->node->gpus[g].uuid, u);
	}
	return 0;
}

static int check_env(const struct gf_assignment *a, const char *who,
		     struct gf_err *e)
{
	if (a->nenv < 0 || a->nenv > GF_WORKER_ENV_MAX)
		return BAD(GF_ETOOBIG, "%s: %d environment pairs, at most %d",
			   who, a->nenv, GF_WORKER_ENV_MAX);
	for (int i = 0; i < a->nenv; i++) {
		const char *n = a->env[i].name, *v = a->env[i].value;
		if (n == NULL || v == NULL || !valid_env_name(n))
			return BAD(GF_EINVAL,
				   "%s: bad environment name '%.64s'", who,
				   n ? n : "(null)");
		if (strlen(n) >= GF_WORKER_ENV_NAME_MAX ||
		    strlen(v) >= GF_WORKER_ENV_VALUE_MAX)
			return BAD(GF_ETOOBIG,
				   "%s: environment '%.64s' longer than %d "
				   "bytes",
				   who, n, GF_WORKER_ENV_VALUE_MAX - 1);
		if (is_reserved(n))
			return BAD(GF_EINVAL, "%s: '%s' is set by the worker",
				   who, n);
		for (int k = 0; k < i; k++)
			if (strcmp(a->env[k].name, n) == 0)
				return BAD(GF_EINVAL, "%s: '%s' given twice",
					   who, n);
	}
	return 0;
}

static int check_assignment(const struct gf_worker *w,
			    const struct gf_assignment *a, const char *who,
			    struct gf_err *e)
{
	size_t clen = a->command ? strlen(a->command) : 0;
	if (clen == 0)
		return BAD(GF_EINVAL, "%s: no command", who);
	if (clen >= GF_WORKER_CMD_MAX)
		return BAD(GF_ETOOBIG, "%s: command of %zu bytes, at most %d",
			   who, clen, GF_WORKER_CMD_MAX - 1);
	if (a->workdir &&
	    (a->workdir[0] != '/' || strlen(a->workdir) >= GF_WORKER_PATH_MAX))
		return BAD(GF_EINVAL, "%s: workdir must be an absolute path",
			   who);
	if (a->cpu_milli < 0 || a->max_runtime_ms < 0)
		return BAD(GF_EINVAL, "%s: negative cpu_milli or max runtime",
			   who);
	if (a->array_job && a->array_job[0] &&
	    (!plain(a->array_job, GF_WORKER_ID_MAX, "._-") ||
	     a->array_task < 0))
		return BAD(GF_EINVAL, "%s: a bad array id or task index", who);
	int rc = check_gang(a, who, e);
	if (rc == 0)
		rc = check_gpus(w, a, who, e);
	if (rc == 0)
		rc = check_env(a, who, e);
	return rc;
}

static void add(struct gf__prep *p, const char *name, const char *value)
{
	size_t n = strlen(name), m = strlen(value);
	char *s = gf_malloc(n + m + 2);
	memcpy(s, name, n);
	s[n] = '=';
	memcpy(s + n + 1, value, m + 1);
	p->envp[p->nenv++] = s;
	p->envp[p->nenv] = NULL;
}

static bool assigned(const struct gf_assignment *a, const char *name)
{
	for (int i = 0; i < a->nenv; i++)
		if (strcmp(a->env[i].name, name) == 0)
			return true;
	return false;
}

/* CUDA_VISIBLE_DEVICES: the MIG device, the GPUs' UUIDs when all are
 * known (the assignment's, else the node's), else their indexes in PCI
 * bus order; "" for a job without GPU. */
static void gpu_env(const struct gf_worker *w, const struct gf_assignment *a,
		    const struct gf_bind_plan *plan, struct gf__prep *p)
{
	bool uuids = true;
	if (plan)
		for (int i = 0; i < plan->nenv; i++)
			if (strcmp(plan->env_name[i], "ROCR_VISIBLE_DEVICES") ==
			    0) {
				add(p, plan->env_name[i], plan->env_value[i]);
				return;
			}
	if (a->kind == GF_WORKER_GPU_MIG) {
		add(p, "CUDA_VISIBLE_DEVICES", a->mig_uuid);
		return;
	}
	const char *u[GF_MAX_GPUS];
	for (int i = 0; i < a->place.ngpus; i++) {
		u[i] = a->gpu_uuids[i];
		if ((u[i] == NULL || u[i][0] == '\0') && w->node)
			u[i] = w->node->gpus[a->place.gpus[i]].uuid;
		if (u[i] == NULL || u[i][0] == '\0')
			uuids = false;
	}
	/* an environment variable's room: the list is never cut */
	struct gf_buf v;
	gf_buf_init(&v, 1u << 20);
	for (int i = 0; i < a->place.ngpus; i++) {
		if (uuids)
			(void)gf_buf_printf(&v, "%s%s", i ? "," : "", u[i]);
		else
			(void)gf_buf_printf(&v, "%s%d", i ? "," : "",
					    a->place.gpus[i]);
	}
	add(p, "CUDA_VISIBLE_DEVICES", gf_buf_str(&v));
	gf_buf_release(&v);
	if (!uuids && a->place.ngpus > 0)
		add(p, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
}

/* name=N */
static void add_num(struct gf__prep *p, const char *name, int v)
{
	char num[16];
	if (gf_fmt(num, sizeof(num), "%d", v) == 0) /* an int fits */
		add(p, name, num);
}

/* HOME, USER, LOGNAME, SHELL of the user it runs as (unless the job set
 * them), and PWD: where it starts. */
static void user_env(const struct gf_assignment *a, struct gf__prep *p)
{
	const char *const kv[][2] = { { "HOME", p->home },
				      { "USER", p->login },
				      { "LOGNAME", p->login },
				      { "SHELL", p->shell } };
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		if (kv[i][1][0] && !assigned(a, kv[i][0]))
			add(p, kv[i][0], kv[i][1]);
	add(p, "PWD", p->workdir);
}

/* The passwd entry of login (NULL: of uid) into p: 0, or GF_ENOTFOUND. */
static int passwd_of(const char *login, uid_t uid, struct gf__prep *p)
{
	struct passwd pw, *found = NULL;
	char buf[16384];
	int rc = login ? getpwnam_r(login, &pw, buf, sizeof(buf), &found)
		       : getpwuid_r(uid, &pw, buf, sizeof(buf), &found);
	if (rc != 0 || found == NULL)
		return GF_ENOTFOUND;
	p->uid = pw.pw_uid;
	p->gid = pw.pw_gid;
	/* a longer one is cut: an entry's fields are far shorter */
	gf_note(p->login, sizeof(p->login), "%s", pw.pw_name);
	gf_note(p->home, sizeof(p->home), "%s", pw.pw_dir ? pw.pw_dir : "");
	gf_note(p->shell, sizeof(p->shell), "%s",
		pw.pw_shell ? pw.pw_shell : "");
	return 0;
}

/* Who the job runs as (issue 21): its user, else the worker's default,
 * else the agent's own; its groups when that is another user; where it
 * starts.  0, or an error saying why it cannot run here. */
static int run_as(const struct gf_worker *w, const struct gf_assignment *a,
		  const char *who, struct gf__prep *p, struct gf_err *e)
{
	const char *login = a->user && a->user[0] ? a->user
			    : w->default_user[0]  ? w->default_user
						  : NULL;
	uid_t me = geteuid();
	if (login && !gf_str_is_login(login))
		return BAD(GF_EINVAL, "%s: user '%.64s' is not a login name",
			   who, login);
	if (passwd_of(login, me, p) != 0) {
		if (login)
			return BAD(GF_ENOTFOUND,
				   "%s: user '%s' is unknown on this node", who,
				   login);
		p->uid = me; /* the agent's own user, without an entry */
		p->gid = getegid();
	}
	if (p->uid == 0 && a->refuse_root)
		return BAD(-EPERM,
			   "%s: it would run as root, which the controller's "
			   "config does not allow (allow_root: true); give "
			   "the token a user:LOGIN or the agent a "
			   "--default-user",
			   who);
	if (p->uid != me && me != 0)
		return BAD(-EPERM,
			   "%s: cannot run as '%s' (uid %u): the agent runs as "
			   "uid %u, not root",
			   who, p->login, (unsigned)p->uid, (unsigned)me);
	p->switch_user = p->uid != me || (login && me == 0);
	if (p->switch_user) {
		int n = GF_WORKER_GROUPS_MAX;
		if (getgrouplist(p->login, p->gid, p->groups, &n) < 0) {
			gf_log(GF_LOG_WARN, "worker",
			       "%s: user '%s' is in more than %d groups: the "
			       "job gets the first %d",
			       who, p->login, GF_WORKER_GROUPS_MAX,
			       GF_WORKER_GROUPS_MAX);
			n = GF_WORKER_GROUPS_MAX;
		}
		p->ngroups = n;
	}
	const char *dir = a->workdir && a->workdir[0] ? a->workdir
			  : p->home[0] == '/'	      ? p->home
						      : "/";
	gf_note(p->workdir, sizeof(p->workdir), "%s", dir); /* checked */
	return 0;
}

static void build_env(const struct gf_worker *w, const struct gf_assignment *a,
		      const struct gf_bind_plan *plan, struct gf__prep *p)
{
	if (!assigned(a, "PATH"))
		add(p, "PATH", GF__DEFAULT_PATH);
	for (int i = 0; i < a->nenv; i++)
		add(p, a->env[i].name, a->env[i].value);
	for (int i = 0; plan && i < plan->nenv; i++) {
		const char *n = plan->env_name[i];
		if ((strcmp(n, "NCCL_IB_HCA") == 0 ||
		     strcmp(n, "NCCL_SOCKET_IFNAME") == 0 ||
		     strcmp(n, "UCX_NET_DEVICES") == 0) &&
		    !assigned(a, n))
			add(p, n, plan->env_value[i]);
	}
	user_env(a, p);
	gpu_env(w, a, plan, p);
	add(p, "GPUFLEET_JOB_ID", a->job);
	add_num(p, "GPUFLEET_REPLICA", a->replica);
	add(p, "GPUFLEET_NODE", w->node_name);
	if (a->world_size > 1) {
		add_num(p, "WORLD_SIZE", a->world_size);
		add_num(p, "RANK", a->rank);
		add_num(p, "LOCAL_RANK", a->local_rank);
		add(p, "MASTER_ADDR", a->master_addr);
		add_num(p, "MASTER_PORT", a->master_port);
	}
	if (a->array_job && a->array_job[0]) { /* an array's task */
		add(p, "GPUFLEET_ARRAY_JOB_ID", a->array_job);
		add_num(p, "GPUFLEET_ARRAY_TASK_ID", a->array_task);
		add(p, "SLURM_ARRAY_JOB_ID",
		    a->array_job + (a->array_job[0] == 'j'));
		add_num(p, "SLURM_ARRAY_TASK_ID", a->array_task);
	}
}

/* The plan for the assignment's GPUs with ceil(cpu_milli/1000) CPUs,
 * capped at the GPUs' local ones. */
static int plan_for(const struct gf_worker *w, const struct gf_assignment *a,
		    const char *who, struct gf_bind_plan *plan,
		    struct gf__prep *p, struct gf_err *e)
{
	struct gf_bind_request r;
	memset(&r, 0, sizeof(r));
	r.ngpus = a->place.ngpus;
	memcpy(r.gpus, a->place.gpus, sizeof(int) * (size_t)a->place.ngpus);
	struct gf_err pe;
	gf_err_clear(&pe);
	int rc = gf_bind_plan(w->node, &r, plan, &pe);
	if (rc != 0)
		return BAD(rc, "%s: cannot plan the binding: %s", who, pe.msg);
	int local = gf_bitmap_count(&plan->cpus);
	long want = ((long)a->cpu_milli + 999) / 1000;
	if (want == 0 || !plan->locality_known)
		return 0;
	if (want > local) {
		gf_note(p->note, sizeof(p->note),
			"%ld CPUs asked for, the GPUs' local CPUs are %d: "
			"bound to those",
			want, local);
		gf_log(GF_LOG_WARN, "worker", "%s: %s", who, p->note);
		return 0;
	}
	r.cpus = (int)want;
	rc = gf_bind_plan(w->node, &r, plan, &pe);
	if (rc != 0)
		return BAD(rc, "%s: cannot plan %ld CPUs: %s", who, want,
			   pe.msg);
	return 0;
}

static void binding(const struct gf_worker *w, const struct gf_bind_plan *plan,
		    struct gf__prep *p)
{
	if (w->env_only || !plan->locality_known)
		return;
	p->cpus = plan->cpus;
	struct gf_bitmap all;
	gf_bitmap_zero(&all);
	for (int i = 0; i < w->node->nnuma; i++)
		gf_bitmap_set(&all, w->node->numa[i].os_index);
	/* binding memory to every node changes nothing: leave the policy */
	if (!gf_bitmap_equal(&plan->mems, &all))
		p->mems = plan->mems;
}

/*
 * A job without GPU on this machine: ceil(cpu_milli / 1000) of the node's
 * CPUs (0: left unbound), those the fewest running runs are bound to,
 * lowest first, and the memory of their NUMA nodes (unless every one).
 * More asked for than the node has: every CPU, with a note.
 */
static void cpu_binding(const struct gf_worker *w,
			const struct gf_assignment *a, struct gf__prep *p)
{
	const struct gf_node *n = w->node;
	long want = ((long)a->cpu_milli + 999) / 1000;
	int have = gf_bitmap_count(&n->cpus);
	if (want <= 0 || have == 0)
		return;
	if (want >= have) {
		if (want > have)
			gf_note(p->note, sizeof(p->note),
				"%ld CPUs asked for, the node has %d: bound "
				"to those",
				want, have);
		return; /* every CPU: nothing to bind */
	}
	unsigned short use[GF_BITMAP_BITS];
	memset(use, 0, sizeof(use));
	for (int k = 0; k < w->njobs; k++) {
		const struct gf__wjob *j = &w->jobs[k];
		int c;
		if (j->state != GF__W_RUNNING)
			continue;
		gf_bitmap_for_each(c, &j->cpus) if (use[c] < USHRT_MAX)
			use[c]++;
	}
	gf_bitmap_zero(&p->cpus);
	for (unsigned short level = 0; want > 0; level++) {
		int c;
		gf_bitmap_for_each(c, &n->cpus)
		{
			if (want > 0 && use[c] == level &&
			    gf_bitmap_set(&p->cpus, c) == 0)
				want--;
		}
		if (level == USHRT_MAX)
			break;
	}
	gf_bitmap_zero(&p->mems);
	bool all = true;
	for (int i = 0; i < n->nnuma; i++) {
		if (gf_bitmap_intersects(&n->numa[i].cpus, &p->cpus))
			(void)!gf_bitmap_set(&p->mems, n->numa[i].os_index);
		else
			all = false;
	}
	if (all) /* binding memory to every node changes nothing */
		gf_bitmap_zero(&p->mems);
}

int gf__prep_build(const struct gf_worker *w, const struct gf_assignment *a,
		   struct gf__prep *p, struct gf_err *e)
{
	char who[GF_WORKER_ID_MAX + 40];
	memset(p, 0, sizeof(*p));
	gf_note(who, sizeof(who), "job '%s' replica %d attempt %d", a->job,
		a->replica, a->attempt);
	int rc = check_assignment(w, a, who, e);
	if (rc == 0)
		rc = run_as(w, a, who, p, e);
	if (rc != 0)
		return rc;
	struct gf_bind_plan *plan = NULL;
	if (w->node && a->place.ngpus > 0) {
		plan = gf_malloc(sizeof(*plan));
		rc = plan_for(w, a, who, plan, p, e);
		if (rc != 0) {
			gf_free(plan);
			return rc;
		}
		binding(w, plan, p);
	} else if (w->node && w->node->this_system && !w->env_only &&
		   a->place.ngpus == 0 && a->kind != GF_WORKER_GPU_MIG) {
		cpu_binding(w, a, p);
	}
	p->envp = gf_calloc(GF__ENV_SLOTS + 1, sizeof(char *));
	build_env(w, a, plan, p);
	gf_free(plan);
	if (a->kind == GF_WORKER_GPU_WHOLE)
		p->gpu_milli = 1000 * a->place.ngpus;
	else
		p->gpu_milli = a->place.gpu_milli;
	return 0;
}

void gf__prep_release(struct gf__prep *p)
{
	for (int i = 0; p->envp && i < p->nenv; i++)
		gf_free(p->envp[i]);
	gf_free(p->envp);
	p->nenv = 0;
}
