/*
 * test_slurm.c - the Slurm adapters (src/slurm) on facts derived by hand:
 * gres.conf Cores= in Slurm's abstract core numbering on a recording
 * whose OS numbering differs (tests/fixtures/slurm/interleaved-2s.xml:
 * lstopo -l names the cores), Links= as AutoDetect=nvml counts them (the
 * H100 NVL's 12-link bridges, the HGX's NVSwitches counting 0), the node
 * line against the shape, Slurm's GRES and TRES strings, scontrol's
 * one-line output, FGD advice computed by hand, the SPANK plugin's task
 * decisions (GPU ids, the step's cores, the fair split), and sacct
 * records with their GPU-seconds.
 */
#include <math.h>

#include <gpufleet/bind.h>
#include <gpufleet/charge.h>
#include <gpufleet/template.h>

#include "chargeback/chargeback.h"
#include "helpers.h"
#include "slurm/advise.h"
#include "slurm/gres.h"
#include "slurm/snapshot.h"
#include "slurm/taskbind.h"
#include "slurm/usage.h"

#define FIX "tests/fixtures/slurm/"

static struct gf_node *load_fixture(const char *path)
{
	struct gf_node *n = gf_node_new();
	struct gf_err e;
	struct gf_topo_source src = { .xml_path = path };
	gf_err_clear(&e);
	int rc = gf_topo_load(n, &src, &e);
	if (rc)
		print_message("load %s: %s\n", path, e.msg);
	assert_int_equal(rc, 0);
	return n;
}

static struct gf_node *template_node(const char *name)
{
	struct gf_node *n = gf_node_new();
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_template_build(name, n, &e), 0);
	return n;
}

/* The text of a render into a static buffer. */
static const char *render(const struct gf_node *n, bool line,
			  const struct gf_slurm_gres_opts *o)
{
	static char out[16384];
	struct gf_buf b;
	struct gf_err e;
	gf_err_clear(&e);
	gf_buf_init(&b, 1u << 20);
	int rc = line ? gf_slurm_node_line(n, o, &b, &e)
		      : gf_slurm_gres_conf(n, o, &b, &e);
	assert_int_equal(rc, 0);
	snprintf(out, sizeof(out), "%s", gf_buf_str(&b));
	gf_buf_release(&b);
	return out;
}

/* Interleaved sockets: OS CPUs 1,3,5,7 are package 1's, hwloc's cores
 * L#2 {1,5} and L#3 {3,7}: the GPU below package 1 has Cores=2-3 (not
 * the OS ids, not the per-package core ids 0-1). */
static void test_cores_abstract(void **state)
{
	(void)state;
	struct gf_node *n = load_fixture(FIX "interleaved-2s.xml");
	struct gf_slurm_gres_opts o = { .comments = false };
	assert_string_equal(render(n, false, &o),
			    "AutoDetect=off\n"
			    "NodeName=ilv Name=gpu Type=h100 "
			    "File=/dev/nvidia0 Cores=2-3 "
			    "Flags=nvidia_gpu_env\n");
	assert_string_equal(render(n, true, &o),
			    "NodeName=ilv CPUs=8 Boards=1 SocketsPerBoard=2 "
			    "CoresPerSocket=2 ThreadsPerCore=2 "
			    "RealMemory=32768 Gres=gpu:h100:1\n");
	/* the inverse: abstract cores 0 and 3 are OS CPUs 0,4 and 3,7 */
	struct gf_bitmap c, cpus;
	char list[64];
	gf_bitmap_parse_list(&c, "0,3");
	gf_slurm_core_cpus(n, &c, &cpus);
	gf_bitmap_format_list(&cpus, list, sizeof(list));
	assert_string_equal(list, "0,3-4,7");
	gf_bitmap_parse_list(&cpus, "5");
	gf_slurm_abstract_cores(n, &cpus, &c);
	gf_bitmap_format_list(&c, list, sizeof(list));
	assert_string_equal(list, "2");
	gf_node_free(n);
}

/* A recorded Intel server (open-mpi/hwloc 24em64t-2n6c2t-pci.xml) with
 * interleaved sockets: `lstopo -l -c` prints package 0 as 0x00555555
 * (even CPUs), cores L#0-5 in it (L#0 = 0x00001001: CPUs 0 and 12) and
 * L#6 = 0x00002002 (CPUs 1 and 13) first in package 1.  GPU0 hangs below
 * package 0, GPUs 1-2 below package 1.  RealMemory: its two NUMA nodes'
 * local_memory, 19316633600 + 19327348736 bytes, is 36853 MiB. */
static void test_cores_recorded(void **state)
{
	(void)state;
	struct gf_node *n = load_shared(
		"topologies/hwloc-xml/open-mpi_hwloc/24em64t-2n6c2t-pci.xml");
	struct gf_slurm_gres_opts o = { .comments = false };
	const char *s = render(n, false, &o);
	assert_non_null(strstr(s, "File=/dev/nvidia0 Cores=0-5 "));
	assert_non_null(strstr(s, "File=/dev/nvidia1 Cores=6-11 "));
	assert_non_null(strstr(s, "File=/dev/nvidia2 Cores=6-11 "));
	/* its model is not in the catalog: no Type= (not "10de:06d2") */
	assert_null(strstr(s, "Type="));
	struct gf_bitmap c, cpus;
	char list[64];
	gf_bitmap_parse_list(&c, "0,6");
	gf_slurm_core_cpus(n, &c, &cpus);
	gf_bitmap_format_list(&cpus, list, sizeof(list));
	assert_string_equal(list, "0-1,12-13");
	assert_string_equal(render(n, true, &o),
			    "NodeName=mirage004 CPUs=24 Boards=1 "
			    "SocketsPerBoard=2 CoresPerSocket=6 "
			    "ThreadsPerCore=2 RealMemory=36853 Gres=gpu:3\n");
	gf_node_free(n);
}

/* Hyperthreads: the template numbers core c's threads c and c + 112
 * (Linux's order), so GPU0's 112 CPUs are 56 cores, 0-55. */
static void test_cores_threads(void **state)
{
	(void)state;
	struct gf_node *n = template_node("hgx-h100");
	struct gf_slurm_gres_opts o = { .nodename = "g1",
					.dev_dir = "/d",
					.comments = true };
	const char *s = render(n, false, &o);
	assert_non_null(strstr(s, "NodeName=g1 Name=gpu Type=h100 "
				  "File=/d/nvidia0 Cores=0-55 "
				  "Links=-1,0,0,0,0,0,0,0 "
				  "Flags=nvidia_gpu_env\n"));
	assert_non_null(strstr(s, "File=/d/nvidia7 Cores=56-111 "
				  "Links=0,0,0,0,0,0,0,-1 "));
	/* NVSwitch links end at no GPU: AutoDetect=nvml counts 0 there */
	assert_non_null(strstr(s, "NVSwitch paths are 0"));
	/* minor numbers known (NVML): File= is the GPU's own device */
	for (int g = 0; g < n->ngpus; g++) {
		n->gpus[g].minor = 7 - g;
		n->gpus[g].has_minor = true;
	}
	s = render(n, false, &o);
	assert_non_null(strstr(s, "File=/d/nvidia7 Cores=0-55 "
				  "Links=-1,0,0,0,0,0,0,0 "));
	assert_non_null(strstr(s, "by its minor number (NVML)"));
	assert_string_equal(render(n, true, &o),
			    "NodeName=g1 CPUs=224 Boards=1 SocketsPerBoard=2 "
			    "CoresPerSocket=56 ThreadsPerCore=2 "
			    "RealMemory=2097152 Gres=gpu:h100:8\n");
	gf_node_free(n);
}

/* H100 NVL pairs: three bridges of four links, NV12 between partners. */
static void test_links_nvl(void **state)
{
	(void)state;
	struct gf_node *n = template_node("h100-nvl");
	struct gf_slurm_gres_opts o = { .nodename = "nvl", .type = "nvl" };
	const char *s = render(n, false, &o);
	assert_non_null(strstr(s, "Type=nvl File=/dev/nvidia0 Cores=0-63 "
				  "Links=-1,12,0,0 "));
	assert_non_null(strstr(s, "File=/dev/nvidia1 Cores=0-63 "
				  "Links=12,-1,0,0 "));
	assert_non_null(strstr(s, "File=/dev/nvidia3 Cores=0-63 "
				  "Links=0,0,12,-1 "));
	o.autodetect_nvml = true;
	assert_non_null(strstr(render(n, false, &o), "AutoDetect=nvml\n"));
	gf_node_free(n);
}

static void test_type_and_names(void **state)
{
	(void)state;
	struct gf_node *n = template_node("hgx-h100");
	static const char *const names[][2] = {
		{ "NVIDIA H100 80GB HBM3", "h100" },
		{ "NVIDIA A100-SXM4-80GB", "a100" },
		{ "Tesla V100-SXM2-32GB", "v100" },
		{ "NVIDIA L40S", "l40s" },
		{ "AMD Instinct MI250X", "mi250x" },
		{ "NVIDIA RTX A6000", "a6000" },
		{ "Mystery GPU", "mystery_gpu" },
		{ "", "" },
	};
	char t[64];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(n->gpus[0].name, sizeof(n->gpus[0].name), "%s",
			 names[i][0]);
		gf_slurm_type_name(n, 0, t, sizeof(t));
		assert_string_equal(t, names[i][1]);
	}
	/* a GPU without a name: no Type= on any line */
	struct gf_slurm_gres_opts o = { .nodename = "x" };
	const char *s = render(n, false, &o);
	assert_null(strstr(s, "Type="));
	assert_non_null(strstr(render(n, true, &o), " Gres=gpu:8\n"));
	struct gf_buf b;
	struct gf_err e;
	gf_buf_init(&b, 4096);
	o.nodename = "two words";
	assert_int_equal(gf_slurm_gres_conf(n, &o, &b, &e), GF_EINVAL);
	o.nodename = NULL;
	n->hostname[0] = '\0';
	assert_int_equal(gf_slurm_node_line(n, &o, &b, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "--nodename"));
	gf_buf_release(&b);
	gf_node_free(n);
}

static void test_gres_strings(void **state)
{
	(void)state;
	int n;
	char t[64];
	uint64_t idx;
	assert_int_equal(gf_slurm_parse_gres("gpu:h100:8(S:0-1)", &n, t,
					     sizeof(t), &idx),
			 0);
	assert_int_equal(n, 8);
	assert_string_equal(t, "h100");
	assert_true(idx == 0);
	assert_int_equal(gf_slurm_parse_gres("gpu:h100:3(IDX:0-1,4)", &n, t,
					     sizeof(t), &idx),
			 0);
	assert_int_equal(n, 3);
	assert_true(idx == 0x13);
	assert_int_equal(gf_slurm_parse_gres("gpu:4", &n, t, sizeof(t), &idx),
			 0);
	assert_int_equal(n, 4);
	assert_string_equal(t, "");
	assert_int_equal(gf_slurm_parse_gres("gpu:h100:0(IDX:N/A)", &n, t,
					     sizeof(t), &idx),
			 0);
	assert_int_equal(n, 0);
	assert_int_equal(gf_slurm_parse_gres("gpu:a100:2(IDX:0-1),mps:200,"
					     "gpu:h100:1(IDX:4)",
					     &n, t, sizeof(t), &idx),
			 0);
	assert_int_equal(n, 3);
	assert_string_equal(t, "a100");
	assert_true(idx == 0x13);
	assert_int_equal(gf_slurm_parse_gres("(null)", &n, t, sizeof(t), &idx),
			 0);
	assert_int_equal(n, 0);
	assert_int_equal(
		gf_slurm_parse_gres("gpu:h100:x", &n, t, sizeof(t), &idx),
		GF_EPARSE);
	assert_int_equal(
		gf_slurm_parse_gres("gpu:2(IDX:70)", &n, t, sizeof(t), &idx),
		GF_ERANGE);
	/* TRES: 22.05 writes gres:gpu:TYPE:N, later releases gres/gpu:N */
	assert_int_equal(
		gf_slurm_parse_tres_gpus("gres:gpu:h100:2", &n, t, sizeof(t)),
		0);
	assert_int_equal(n, 2);
	assert_string_equal(t, "h100");
	assert_int_equal(
		gf_slurm_parse_tres_gpus("cpu=2,gres/gpu:4", &n, t, sizeof(t)),
		0);
	assert_int_equal(n, 4);
	assert_int_equal(gf_slurm_parse_tres_gpus("gres/gpu=3;gres/mps=50", &n,
						  t, sizeof(t)),
			 0);
	assert_int_equal(n, 3);
	assert_int_equal(gf_slurm_parse_tres_gpus("cpu=1", &n, t, sizeof(t)),
			 0);
	assert_int_equal(n, 0);
	assert_true(gf_slurm_list_has("gpu,big", "big"));
	assert_false(gf_slurm_list_has("gpu,big", "bi"));
}

static void test_scontrol(void **state)
{
	(void)state;
	struct gf_slurm_snapshot s;
	struct gf_err e;
	gf_err_clear(&e);
	gf_slurm_snapshot_init(&s);
	assert_int_equal(gf_slurm_snapshot_read_scontrol(&s, FIX "nodes.txt",
							 FIX "jobs.txt", &e),
			 0);
	assert_int_equal(s.nnodes, 4);
	const struct gf_slurm_node *n2 = &s.nodes[1];
	assert_string_equal(n2->name, "n2");
	assert_string_equal(n2->partitions, "gpu,big");
	assert_int_equal(n2->ngpus, 8);
	assert_true(n2->used == 0x25); /* IDX:0,2,5 */
	assert_int_equal(n2->cpus, 64);
	assert_int_equal(n2->cpus_alloc, 6);
	assert_false(n2->unusable);
	assert_true(s.nodes[2].unusable); /* IDLE+DRAIN */
	assert_string_equal(s.nodes[3].gpu_type, "a100");
	/* the completed job 90 is not kept */
	assert_int_equal(s.njobs, 9);
	const struct gf_slurm_job *j = &s.jobs[8];
	assert_int_equal(j->id, 204);
	assert_true(j->pending);
	assert_int_equal(j->nodes, 2);
	assert_int_equal(j->gpus_per_node, 2);
	assert_int_equal(j->cpus_per_node, 4);
	assert_string_equal(j->partition, "gpu,big");
	assert_string_equal(s.jobs[7].gpu_type, "a100");
	gf_slurm_snapshot_release(&s);
	/* errors name the file and line */
	char path[] = "/tmp/gf-slurm-nodes-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char bad[] = "NodeName=x CPUTot=4 CPUAlloc=0 Gres=gpu:x:y\n";
	assert_int_equal(write(fd, bad, sizeof(bad) - 1), sizeof(bad) - 1);
	close(fd);
	gf_slurm_snapshot_init(&s);
	assert_int_equal(gf_slurm_snapshot_read_scontrol(&s, path, NULL, &e),
			 GF_EPARSE);
	assert_non_null(strstr(e.msg, ":1: field 'Gres'"));
	gf_slurm_snapshot_release(&s);
	unlink(path);
}

/* Write text into a new temporary file; its path in path. */
static void temp_file(char *path, const char *text)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t n = strlen(text);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
}

/* A state longer than the field kept for it is judged whole (cut at 31
 * bytes, "MIXED+CLOUD+COMPLETING+PLANNED+" was read as usable); a name longer
 * than its field is an error naming the field (it was cut silently). */
static void test_scontrol_long_fields(void **state)
{
	(void)state;
	struct gf_slurm_snapshot s;
	struct gf_err e;
	gf_err_clear(&e);
	char path[] = "/tmp/gf-slurm-nodes-XXXXXX";
	temp_file(path, "NodeName=n1 CPUTot=4 CPUAlloc=0 Gres=gpu:2 "
			"GresUsed=gpu:0 Partitions=gpu "
			"State=MIXED+CLOUD+COMPLETING+PLANNED+DRAIN\n");
	gf_slurm_snapshot_init(&s);
	assert_int_equal(gf_slurm_snapshot_read_scontrol(&s, path, NULL, &e),
			 0);
	assert_int_equal(s.nnodes, 1);
	assert_true(s.nodes[0].unusable);
	assert_int_equal(strlen(s.nodes[0].state),
			 sizeof(s.nodes[0].state) - 1);
	gf_slurm_snapshot_release(&s);
	unlink(path);

	char name[GF_SLURM_NAME_MAX + 8], line[256];
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(line, sizeof(line),
		 "NodeName=%s CPUTot=4 CPUAlloc=0 Gres=gpu:2 GresUsed=gpu:0\n",
		 name);
	char path2[] = "/tmp/gf-slurm-nodes-XXXXXX";
	temp_file(path2, line);
	gf_slurm_snapshot_init(&s);
	assert_int_equal(gf_slurm_snapshot_read_scontrol(&s, path2, NULL, &e),
			 GF_EPARSE);
	assert_non_null(strstr(e.msg, ":1: field 'NodeName' longer than 63"));
	gf_slurm_snapshot_release(&s);
	unlink(path2);
}

static void add_node(struct gf_slurm_snapshot *s, const char *name,
		     const char *parts, uint64_t used, int cpus_alloc)
{
	struct gf_slurm_node n;
	memset(&n, 0, sizeof(n));
	snprintf(n.name, sizeof(n.name), "%s", name);
	snprintf(n.partitions, sizeof(n.partitions), "%s", parts);
	snprintf(n.gpu_type, sizeof(n.gpu_type), "h100");
	n.ngpus = 8;
	n.used = used;
	n.cpus = 64;
	n.cpus_alloc = cpus_alloc;
	assert_true(gf_slurm_snapshot_add_node(s, &n) >= 0);
}

static void add_job(struct gf_slurm_snapshot *s, uint32_t id, bool pending,
		    int gpus, uint32_t prio, const char *part)
{
	struct gf_slurm_job j;
	memset(&j, 0, sizeof(j));
	j.id = id;
	j.pending = pending;
	j.gpus_per_node = gpus;
	j.cpus_per_node = 1;
	j.nodes = 1;
	j.priority = prio;
	snprintf(j.partition, sizeof(j.partition), "%s", part);
	assert_true(gf_slurm_snapshot_add_job(s, &j) >= 0);
}

/*
 * By hand (frag.h): every typical job takes 2 whole GPUs.  a has 2 free
 * GPUs, b has 5: both can host one, so F = 0 on both.  A 1-GPU job on a
 * leaves 1 GPU no typical job can use: F(a) = 1 GPU; on b it leaves 4:
 * F(b) stays 0.  FGD places it on b (dF = 0), and a 2-GPU job after it
 * on a (which it empties: dF = 0, where b would be left with 2 and F 0
 * too; the tie goes to the first node).
 */
static void test_advise_by_hand(void **state)
{
	(void)state;
	struct gf_slurm_snapshot s;
	gf_slurm_snapshot_init(&s);
	add_node(&s, "a", "gpu", 0x3f, 6); /* GPUs 0-5 taken */
	add_node(&s, "b", "gpu", 0x07, 3); /* GPUs 0-2 taken */
	add_node(&s, "c", "other", 0x00, 0);
	for (uint32_t i = 0; i < 20; i++)
		add_job(&s, 100 + i, false, 2, 1, "gpu");
	add_job(&s, 300, true, 1, 50, "gpu");
	add_job(&s, 301, true, 2, 40, "gpu");
	struct gf_slurm_advise_opts o = { .coverage = 0.95 };
	struct gf_slurm_advice a;
	struct gf_err e;
	gf_err_clear(&e);
	/* 21 of the 22 jobs take 2 GPUs: 95.5 %, the whole 0.95 mix */
	assert_int_equal(gf_slurm_advise(&s, &o, &a, &e), 0);
	assert_int_equal(a.ntyp, 1);
	assert_int_equal(a.typ[0].ngpus, 2);
	assert_true(a.node_frag[0] == 0 && a.node_frag[1] == 0);
	assert_int_equal(a.node_free[0], 2);
	assert_int_equal(a.node_free[1], 5);
	/* c is in no partition of the jobs; its 8 free GPUs host them */
	assert_int_equal(a.nprops, 2);
	assert_int_equal(a.props[0].job, 300);
	assert_true(a.props[0].placed);
	assert_int_equal(a.props[0].node[0], 1); /* b */
	assert_int_equal(a.props[0].gpu[0][0], 3);
	assert_true(fabs(a.props[0].dfrag) < 1e-9);
	assert_int_equal(a.props[1].job, 301);
	assert_int_equal(a.props[1].node[0], 0); /* a */
	assert_int_equal(a.props[1].gpu[0][0], 6);
	assert_int_equal(a.props[1].gpu[0][1], 7);
	assert_int_equal(a.nparts, 2);
	assert_string_equal(a.parts[0].name, "gpu");
	assert_int_equal(a.parts[0].free, 7);
	gf_slurm_advice_release(&a);
	/* a shape is tried alone, twice the same answer; its partition
	 * bounds it (c alone has room for 8 in "other") */
	o.nshapes = 2;
	o.shape_gpus[0] = o.shape_gpus[1] = 1;
	o.shapes_only = true;
	assert_int_equal(gf_slurm_advise(&s, &o, &a, &e), 0);
	assert_int_equal(a.nprops, 2);
	assert_int_equal(a.props[0].node[0], a.props[1].node[0]);
	assert_int_equal(a.props[0].node[0], 1);
	gf_slurm_advice_release(&a);
	o.shape_gpus[0] = 8;
	o.nshapes = 1;
	o.shape_partition = "gpu";
	assert_int_equal(gf_slurm_advise(&s, &o, &a, &e), 0);
	assert_false(a.props[0].placed);
	gf_slurm_advice_release(&a);
	o.shape_partition = "other";
	assert_int_equal(gf_slurm_advise(&s, &o, &a, &e), 0);
	assert_true(a.props[0].placed);
	assert_int_equal(a.props[0].node[0], 2);
	gf_slurm_advice_release(&a);
	/* a drained node is left out and takes nothing */
	s.nodes[1].unusable = true;
	o = (struct gf_slurm_advise_opts){ .coverage = 0.95, .job = 300 };
	assert_int_equal(gf_slurm_advise(&s, &o, &a, &e), 0);
	assert_true(isnan(a.node_frag[1]));
	assert_int_equal(a.nprops, 1);
	assert_int_equal(a.props[0].node[0], 0);
	assert_true(fabs(a.props[0].dfrag - 1.0) < 1e-9);
	gf_slurm_advice_release(&a);
	o.job = 100;
	assert_int_equal(gf_slurm_advise(&s, &o, &a, &e), GF_EINVAL);
	o.job = 999;
	assert_int_equal(gf_slurm_advise(&s, &o, &a, &e), GF_ENOTFOUND);
	gf_slurm_snapshot_release(&s);
}

/* With a topology, the best connected GPUs: H100 NVL pairs 0-1 and 2-3
 * (NV12); with GPU 0 taken, two GPUs are the pair 2-3, not 1-2. */
static void test_advise_topology(void **state)
{
	(void)state;
	struct gf_node *n = template_node("h100-nvl");
	struct gf_gpu_topo t;
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_gpu_topo_from_node(n, &t, &e), 0);
	struct gf_slurm_snapshot s;
	gf_slurm_snapshot_init(&s);
	struct gf_slurm_node sn;
	memset(&sn, 0, sizeof(sn));
	snprintf(sn.name, sizeof(sn.name), "nvl");
	sn.ngpus = 4;
	sn.cpus = 64;
	sn.used = 0x1; /* GPU 0 taken: 1-2 is no pair, 2-3 is */
	assert_true(gf_slurm_snapshot_add_node(&s, &sn) >= 0);
	struct gf_slurm_advise_opts o = { .topo = &t,
					  .nshapes = 1,
					  .shape_gpus = { 2 },
					  .shapes_only = true };
	struct gf_slurm_advice a;
	assert_int_equal(gf_slurm_advise(&s, &o, &a, &e), 0);
	assert_true(a.props[0].placed);
	assert_int_equal(a.props[0].gpu[0][0], 2);
	assert_int_equal(a.props[0].gpu[0][1], 3);
	char q[16];
	gf_slurm_quality_name(a.props[0].min_pair, q, sizeof(q));
	assert_string_equal(q, "NV12");
	gf_slurm_advice_release(&a);
	gf_slurm_snapshot_release(&s);
	gf_node_free(n);
}

static void test_taskbind_parse(void **state)
{
	(void)state;
	struct gf_tb_opts o;
	char why[256];
	assert_int_equal(gf_tb_parse("closest", &o, why, sizeof(why)), 0);
	assert_true(o.mode == GF_TB_CLOSEST && !o.verbose && !o.strict);
	assert_int_equal(gf_tb_parse("verbose", &o, why, sizeof(why)), 0);
	assert_true(o.mode == GF_TB_CLOSEST && o.verbose);
	assert_int_equal(gf_tb_parse("strict,closest", &o, why, sizeof(why)),
			 0);
	assert_true(o.mode == GF_TB_CLOSEST && o.strict);
	assert_int_equal(gf_tb_parse("verbose,nic", &o, why, sizeof(why)), 0);
	assert_true(o.mode == GF_TB_NIC && o.verbose);
	assert_int_equal(gf_tb_parse("none", &o, why, sizeof(why)), 0);
	assert_true(o.mode == GF_TB_NONE);
	assert_int_equal(gf_tb_parse("nic,none", &o, why, sizeof(why)), -1);
	assert_int_equal(gf_tb_parse("(null)", &o, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "'(null)'"));
	assert_int_equal(gf_tb_parse("", &o, why, sizeof(why)), -1);
}

static void test_taskbind_gpus(void **state)
{
	(void)state;
	struct gf_node *n = template_node("hgx-h100");
	struct gf_bind_request r;
	bool whole;
	char why[256];
	/* no ConstrainDevices: CUDA_VISIBLE_DEVICES holds global ids */
	assert_int_equal(
		gf_tb_task_gpus(n, "4,5", "4,5", &r, &whole, why, sizeof(why)),
		0);
	assert_true(r.ngpus == 2 && r.gpus[0] == 4 && r.gpus[1] == 5 && whole);
	/* ConstrainDevices: ids relative to the step's list */
	assert_int_equal(
		gf_tb_task_gpus(n, "4,6", "0,1", &r, &whole, why, sizeof(why)),
		0);
	assert_true(r.gpus[0] == 4 && r.gpus[1] == 6 && whole);
	/* a task bound to one of the step's GPUs (--gpu-bind) */
	assert_int_equal(
		gf_tb_task_gpus(n, "4,6", "1", &r, &whole, why, sizeof(why)),
		0);
	assert_true(r.ngpus == 1 && r.gpus[0] == 6 && !whole);
	assert_int_equal(
		gf_tb_task_gpus(n, "4,6", "6", &r, &whole, why, sizeof(why)),
		0);
	assert_true(r.ngpus == 1 && r.gpus[0] == 6 && !whole);
	/* the batch step: SLURM_JOB_GPUS, no CUDA_VISIBLE_DEVICES */
	assert_int_equal(
		gf_tb_task_gpus(n, "0-2", NULL, &r, &whole, why, sizeof(why)),
		0);
	assert_int_equal(r.ngpus, 3);
	/* nothing: no GPU in the step */
	assert_int_equal(
		gf_tb_task_gpus(n, NULL, NULL, &r, &whole, why, sizeof(why)),
		1);
	assert_int_equal(gf_tb_task_gpus(n, "", "NoDevFiles", &r, &whole, why,
					 sizeof(why)),
			 1);
	/* a GPU the node does not have */
	assert_int_equal(
		gf_tb_task_gpus(n, "9", NULL, &r, &whole, why, sizeof(why)),
		-1);
	assert_non_null(strstr(why, "GPU 9 is not one of this node's"));
	assert_int_equal(gf_tb_task_gpus(n, "0", "GPU-abc", &r, &whole, why,
					 sizeof(why)),
			 -1);
	assert_non_null(strstr(why, "nvml=1"));
	snprintf(n->gpus[3].uuid, sizeof(n->gpus[3].uuid), "GPU-abc");
	assert_int_equal(gf_tb_task_gpus(n, "3", "GPU-abc", &r, &whole, why,
					 sizeof(why)),
			 0);
	assert_int_equal(r.gpus[0], 3);
	gf_node_free(n);
}

/* The template: socket 0 holds cores 0-55 (OS CPUs c and c + 112).
 * GPUs 0,1 with the step on abstract cores 0-3 and 56-59: the GPUs'
 * CPUs in the step are cores 0-3, OS 0-3,112-115; two tasks take two
 * cores each. */
static void test_taskbind_plan(void **state)
{
	(void)state;
	struct gf_node *n = template_node("hgx-h100");
	struct gf_tb_opts o = { .mode = GF_TB_CLOSEST };
	struct gf_bind_request r = { .ngpus = 2, .gpus = { 0, 1 } };
	struct gf_tb_result *res = malloc(sizeof(*res));
	char why[256], l[128];
	assert_int_equal(gf_tb_plan(n, &o, &r, true, 1, 2, "0-3,56-59", res,
				    why, sizeof(why)),
			 0);
	assert_true(res->bind);
	gf_bitmap_format_list(&res->local, l, sizeof(l));
	assert_string_equal(l, "0-3,112-115");
	gf_bitmap_format_list(&res->cpus, l, sizeof(l));
	assert_string_equal(l, "2-3,114-115");
	gf_bitmap_format_list(&res->mems, l, sizeof(l));
	assert_string_equal(l, "0");
	assert_non_null(strstr(res->say, "NIC mlx5_0,mlx5_1"));
	/* the plan's NCCL_IB_HCA names both GPUs' NICs, exactly */
	bool hca = false;
	for (int i = 0; i < res->plan.nenv; i++)
		if (strcmp(res->plan.env_name[i], "NCCL_IB_HCA") == 0)
			hca = strcmp(res->plan.env_value[i],
				     "=mlx5_0,mlx5_1") == 0;
	assert_true(hca);
	/* tasks with their own GPUs are not split */
	assert_int_equal(gf_tb_plan(n, &o, &r, false, 1, 2, "0-3", res, why,
				    sizeof(why)),
			 0);
	gf_bitmap_format_list(&res->cpus, l, sizeof(l));
	assert_string_equal(l, "0-3,112-115");
	/* the step on the other socket only: nothing local, left to Slurm */
	assert_int_equal(gf_tb_plan(n, &o, &r, true, 0, 1, "56-59", res, why,
				    sizeof(why)),
			 0);
	assert_false(res->bind);
	assert_non_null(strstr(res->say, "none of the step's CPUs"));
	/* nic: no binding, the variables only */
	o.mode = GF_TB_NIC;
	assert_int_equal(
		gf_tb_plan(n, &o, &r, true, 0, 1, "0-3", res, why, sizeof(why)),
		0);
	assert_false(res->bind);
	free(res);
	gf_node_free(n);
}

/* Three cores, two tasks: 0-1 of [0,1.5) and [1.5,3) -> one and two. */
static void test_bind_split(void **state)
{
	(void)state;
	struct gf_node *n = template_node("hgx-h100");
	struct gf_bitmap cpus, out;
	char l[128];
	gf_bitmap_parse_list(&cpus, "4-6,116-118");
	gf_bind_split(n, &cpus, 2, 0, &out);
	gf_bitmap_format_list(&out, l, sizeof(l));
	assert_string_equal(l, "4,116");
	gf_bind_split(n, &cpus, 2, 1, &out);
	gf_bitmap_format_list(&out, l, sizeof(l));
	assert_string_equal(l, "5-6,117-118");
	/* more tasks than cores: tasks share */
	gf_bitmap_parse_list(&cpus, "4,116");
	gf_bind_split(n, &cpus, 3, 2, &out);
	gf_bitmap_format_list(&out, l, sizeof(l));
	assert_string_equal(l, "4,116");
	gf_bind_split(n, &cpus, 3, 3, &out);
	assert_true(gf_bitmap_is_empty(&out));
	gf_node_free(n);
}

/* sacct records: 4 GPUs x 3600 s, 2 x 40, 8 x 600 over two nodes, a CPU
 * job, a pending job (no usage), 1 x 1: 19281 GPU-seconds. */
static void test_usage(void **state)
{
	(void)state;
	struct gf_charge_input in;
	struct gf_cb_skips sk = { 0 };
	struct gf_err e;
	gf_err_clear(&e);
	gf_charge_input_init(&in);
	assert_int_equal(
		gf_cb_read_sacct(&in, FIX "sacct.txt", 0, false, &sk, &e), 0);
	struct gf_buf b;
	gf_buf_init(&b, 1u << 20);
	assert_int_equal(gf_slurm_usage_csv(&in, &b), 0);
	const char *s = gf_buf_str(&b);
	assert_non_null(strstr(s, "cluster,node,namespace,pod,container,start,"
				  "end,gpus,cpu_req,cpu_use,ram_req_gib,"
				  "ram_use_gib,labels,gpu_model\n"));
	assert_non_null(strstr(s, "gpu1,n2,vision,103,bo,2026-12-01T00:10:00Z,"
				  "2026-12-01T00:20:00Z,4,8,,64,,"));
	/* a comma in a job name cannot break the line */
	assert_non_null(strstr(s, "job_name=eval_ small;"));
	assert_null(strstr(s, ",105,"));
	gf_buf_reset(&b);
	assert_int_equal(gf_slurm_usage_json(&in, &b), 0);
	assert_non_null(strstr(gf_buf_str(&b), "\"gpu_seconds\": 19281\n"));
	assert_non_null(strstr(gf_buf_str(&b), "\"gpu_seconds\": 4800\n"));
	gf_buf_reset(&b);
	assert_int_equal(gf_slurm_usage_table(&in, &b), 0);
	assert_non_null(strstr(gf_buf_str(&b), "5 jobs, 19281 GPU-seconds"));
	gf_buf_release(&b);
	gf_cb_skips_release(&sk);
	gf_charge_input_release(&in);
}

/* The table's columns stay aligned whatever the text: a state "CANCELLED
 * by 0", an account longer than its header's column. */
static void test_usage_table_aligned(void **state)
{
	(void)state;
	char path[] = "/tmp/gf-sacct-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs("JobID|Cluster|Account|User|Partition|QOS|JobName|State|NodeList|"
	      "Start|End|AllocTRES\n"
	      "7|c|research-computing|alexandra|gpu|normal|x|CANCELLED by 0|n1|"
	      "2026-12-01T00:00:00|2026-12-01T00:10:00|cpu=2,gres/gpu:h100=2,"
	      "gres/gpu=2,node=1\n"
	      "1234567_12|c|nlp|bo|gpu|normal|y|COMPLETED|n2|"
	      "2026-12-01T00:00:00|2026-12-01T00:00:01|cpu=1,gres/gpu=1,"
	      "node=1\n",
	      f);
	fclose(f);
	struct gf_charge_input in;
	struct gf_cb_skips sk = { 0 };
	struct gf_err e;
	gf_err_clear(&e);
	gf_charge_input_init(&in);
	assert_int_equal(gf_cb_read_sacct(&in, path, 0, false, &sk, &e), 0);
	unlink(path);
	struct gf_buf b;
	gf_buf_init(&b, 1u << 20);
	assert_int_equal(gf_slurm_usage_table(&in, &b), 0);
	const char *t = gf_buf_str(&b);
	assert_non_null(strstr(t, "CANCELLED by 0"));
	/* every line's START and GPU_SECONDS end where the header's do */
	const char *hs = strstr(t, "START");
	const char *nl = strchr(t, '\n');
	long start = hs - t, end = nl - t;
	int rows = 0;
	for (const char *l = nl + 1; *l && strncmp(l, "2 jobs", 6); rows++) {
		const char *e2 = strchr(l, '\n');
		assert_non_null(e2);
		assert_int_equal(e2 - l, end);
		assert_int_equal(strncmp(l + start, "2026-12-01T00:00:00Z", 20),
				 0);
		l = e2 + 1;
	}
	assert_int_equal(rows, 2);
	gf_buf_release(&b);
	gf_cb_skips_release(&sk);
	gf_charge_input_release(&in);
}

/* Two tasks share GPUs 0,1 (socket 0) in a step of abstract cores 0 and
 * 56 (one per socket): the GPUs' one core and then the step's other,
 * one each (Slurm alone gives each its own core too); three tasks in a
 * step of cores 0, 56, 57: one core each, the GPUs' first; a step of one
 * core: the tasks share it, and say so. */
static void test_taskbind_distinct_cores(void **state)
{
	(void)state;
	struct gf_node *n = template_node("hgx-h100");
	struct gf_tb_opts o = { .mode = GF_TB_CLOSEST };
	struct gf_bind_request r = { .ngpus = 2, .gpus = { 0, 1 } };
	struct gf_tb_result *res = malloc(sizeof(*res));
	char why[256], l[128];
	const char *want2[] = { "0,112", "56,168" };
	for (int t = 0; t < 2; t++) {
		assert_int_equal(gf_tb_plan(n, &o, &r, true, t, 2, "0,56", res,
					    why, sizeof(why)),
				 0);
		assert_true(res->bind);
		gf_bitmap_format_list(&res->cpus, l, sizeof(l));
		assert_string_equal(l, want2[t]);
		assert_non_null(strstr(res->say, "the step's nearest added"));
		assert_null(strstr(res->say, "share"));
	}
	const char *want3[] = { "0,112", "56,168", "57,169" };
	for (int t = 0; t < 3; t++) {
		assert_int_equal(gf_tb_plan(n, &o, &r, true, t, 3, "0,56-57",
					    res, why, sizeof(why)),
				 0);
		gf_bitmap_format_list(&res->cpus, l, sizeof(l));
		assert_string_equal(l, want3[t]);
	}
	/* enough local cores: the step's others stay out */
	assert_int_equal(gf_tb_plan(n, &o, &r, true, 1, 2, "0-1,56", res, why,
				    sizeof(why)),
			 0);
	gf_bitmap_format_list(&res->cpus, l, sizeof(l));
	assert_string_equal(l, "1,113");
	/* fewer cores than tasks: shared, and said */
	for (int t = 0; t < 2; t++) {
		assert_int_equal(gf_tb_plan(n, &o, &r, true, t, 2, "0", res,
					    why, sizeof(why)),
				 0);
		gf_bitmap_format_list(&res->cpus, l, sizeof(l));
		assert_string_equal(l, "0,112");
		assert_non_null(strstr(res->say, "2 tasks share 1 cores: the "
						 "step has no more"));
	}
	free(res);
	gf_node_free(n);
}

/* --gpus-per-task=2, two tasks on GPUs 0,1 and 2,3 of the step's 0-3
 * (all local to socket 0) in a step of cores 0-3: cores 0-1 and 2-3, not
 * 0-3 both; a task alone on its locality (GPUs 0,1 and 4,5) keeps it;
 * two tasks and one core: shared, and said. */
static void test_taskbind_own_gpus(void **state)
{
	(void)state;
	struct gf_node *n = template_node("hgx-h100");
	struct gf_tb_opts o = { .mode = GF_TB_CLOSEST };
	struct gf_bind_request sg = { .ngpus = 4, .gpus = { 0, 1, 2, 3 } };
	struct gf_bind_request r0 = { .ngpus = 2, .gpus = { 0, 1 } };
	struct gf_bind_request r1 = { .ngpus = 2, .gpus = { 2, 3 } };
	struct gf_tb_result *res = malloc(sizeof(*res));
	char why[256], l[128];
	assert_int_equal(gf_tb_plan_step(n, &o, &r0, &sg, false, 0, 2, "0-3",
					 res, why, sizeof(why)),
			 0);
	gf_bitmap_format_list(&res->cpus, l, sizeof(l));
	assert_string_equal(l, "0-1,112-113");
	assert_int_equal(gf_tb_plan_step(n, &o, &r1, &sg, false, 1, 2, "0-3",
					 res, why, sizeof(why)),
			 0);
	gf_bitmap_format_list(&res->cpus, l, sizeof(l));
	assert_string_equal(l, "2-3,114-115");
	assert_non_null(strstr(res->say, "2 tasks on GPUs of this locality"));
	struct gf_bind_request apart = { .ngpus = 4, .gpus = { 0, 1, 4, 5 } };
	assert_int_equal(gf_tb_plan_step(n, &o, &r0, &apart, false, 0, 2,
					 "0-3,56-59", res, why, sizeof(why)),
			 0);
	gf_bitmap_format_list(&res->cpus, l, sizeof(l));
	assert_string_equal(l, "0-3,112-115");
	assert_int_equal(gf_tb_plan_step(n, &o, &r1, &sg, false, 1, 2, "0", res,
					 why, sizeof(why)),
			 0);
	gf_bitmap_format_list(&res->cpus, l, sizeof(l));
	assert_string_equal(l, "0,112");
	assert_non_null(strstr(res->say, "sharing its cores"));
	free(res);
	gf_node_free(n);
}

static char said[4][512];
static int nsaid;

static void say_into(void *ctx, const char *msg)
{
	(void)ctx;
	if (nsaid < 4)
		snprintf(said[nsaid++], sizeof(said[0]), "%s", msg);
}

/* plugstack.conf arguments: all or nothing, each bad one named. */
static void test_taskbind_args(void **state)
{
	(void)state;
	struct gf_tb_args a;
	const char *good[] = { "default=verbose,closest", "topology=/etc/t.xml",
			       "nvml=1" };
	nsaid = 0;
	assert_int_equal(gf_tb_args(3, good, &a, say_into, NULL), 0);
	assert_int_equal(nsaid, 0);
	assert_int_equal(a.def.mode, GF_TB_CLOSEST);
	assert_true(a.def.verbose);
	assert_string_equal(a.topology, "/etc/t.xml");
	assert_int_equal(a.nvml, 1);
	assert_int_equal(gf_tb_args(0, NULL, &a, say_into, NULL), 0);
	assert_int_equal(a.def.mode, GF_TB_NONE);

	/* a bad default= does not stop the rest being read, nor is any of
	 * them taken: topology= is not half-applied */
	const char *bad[] = { "default=bogus", "topology=/etc/t.xml", "nvml=2",
			      "colour=red" };
	nsaid = 0;
	assert_int_equal(gf_tb_args(4, bad, &a, say_into, NULL), 3);
	assert_int_equal(nsaid, 3);
	assert_non_null(strstr(said[0], "'default=bogus': 'bogus' in 'bogus' "
					"is not closest"));
	assert_string_equal(said[1], "'nvml=2': expected nvml=0 or nvml=1");
	assert_non_null(strstr(said[2], "unknown argument 'colour=red'"));
	assert_string_equal(a.topology, "");
	assert_int_equal(a.def.mode, GF_TB_NONE);

	const char *twice[] = { "topology=", "default=nic", "default=closest" };
	nsaid = 0;
	assert_int_equal(gf_tb_args(3, twice, &a, say_into, NULL), 2);
	assert_string_equal(said[0], "'topology=': empty file name");
	assert_string_equal(said[1], "'default=closest': default= given twice");
	assert_int_equal(a.def.mode, GF_TB_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cores_abstract),
		cmocka_unit_test(test_cores_recorded),
		cmocka_unit_test(test_cores_threads),
		cmocka_unit_test(test_links_nvl),
		cmocka_unit_test(test_type_and_names),
		cmocka_unit_test(test_gres_strings),
		cmocka_unit_test(test_scontrol),
		cmocka_unit_test(test_scontrol_long_fields),
		cmocka_unit_test(test_advise_by_hand),
		cmocka_unit_test(test_advise_topology),
		cmocka_unit_test(test_taskbind_parse),
		cmocka_unit_test(test_taskbind_gpus),
		cmocka_unit_test(test_taskbind_plan),
		cmocka_unit_test(test_taskbind_distinct_cores),
		cmocka_unit_test(test_taskbind_own_gpus),
		cmocka_unit_test(test_taskbind_args),
		cmocka_unit_test(test_usage_table_aligned),
		cmocka_unit_test(test_bind_split),
		cmocka_unit_test(test_usage),
	};
	return cmocka_run_group_tests_name("slurm", tests, NULL, NULL);
}
