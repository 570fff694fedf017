/*
 * test_nccl.c - NCCL topology files as a node source: the hybrid
 * cube-mesh's NVLink matrix as its generator documents it, the vendor
 * files' GPUs, NICs and NUMA layout, and a clear error for every kind of
 * malformed file.
 */
#include <gpufleet/link.h>

#include "helpers.h"
#include "topo/nccl_xml.h"

/* Load a shared NCCL file, or skip when absent; rc is returned. */
static int load_nccl(const char *rel, struct gf_node **out, struct gf_err *e)
{
	char path[512];
	shared_path(path, sizeof(path), rel);
	if (access(path, R_OK) != 0) {
		print_message("shared data absent: %s (set GPUFLEET_SHARED)\n",
			      path);
		skip();
	}
	*out = gf_node_new();
	gf_err_clear(e);
	return gf_nccl_xml_load(*out, path, NULL, 0, NULL, e);
}

static struct gf_node *load_ok(const char *rel)
{
	struct gf_node *n;
	struct gf_err e;
	int rc = load_nccl(rel, &n, &e);
	if (rc)
		print_message("%s: %s\n", rel, e.msg);
	assert_int_equal(rc, 0);
	char msg[256];
	assert_int_equal(gf_node_check(n, msg, sizeof(msg)), 0);
	return n;
}

static int cls(const struct gf_node *n, int a, int b)
{
	return (int)gf_link_between(n, a, b, false).cls;
}

static bool has_note(const struct gf_node *n, const char *s)
{
	for (int i = 0; i < n->nnotes; i++)
		if (strstr(n->notes[i], s))
			return true;
	return false;
}

/* The matrix in gen_nccl_cubemesh.py's docstring (nvidia-smi topo -m of
 * a DGX-1V): NV count, 0 for SYS. */
static const int cube[8][8] = {
	{ 0, 1, 1, 2, 2, 0, 0, 0 }, { 1, 0, 2, 1, 0, 2, 0, 0 },
	{ 1, 2, 0, 2, 0, 0, 1, 0 }, { 2, 1, 2, 0, 0, 0, 0, 1 },
	{ 2, 0, 0, 0, 0, 1, 1, 2 }, { 0, 2, 0, 0, 1, 0, 2, 1 },
	{ 0, 0, 1, 0, 1, 2, 0, 2 }, { 0, 0, 0, 1, 2, 1, 2, 0 },
};

static void test_cubemesh_matrix(void **state)
{
	(void)state;
	struct gf_node *n = load_ok(
		"topologies/synthetic/dgx1v-cubemesh-nccl-synthetic.xml");
	assert_int_equal(n->ngpus, 8);
	assert_int_equal(n->nnics, 4);
	assert_int_equal(n->nnuma, 2);
	assert_true(n->nvlink_known);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++) {
			struct gf_link l = gf_link_between(n, i, j, false);
			if (i == j)
				assert_int_equal(l.cls, GF_LINK_X);
			else if (cube[i][j])
				assert_int_equal(l.nvlinks, cube[i][j]);
			else
				assert_int_equal(l.cls, (i < 4) == (j < 4)
								? GF_LINK_PHB
								: GF_LINK_SYS);
		}
	/* GPU pair (0,1) shares a switch with mlx5_0; V100-SXM2 by id */
	assert_int_equal(cls(n, 0, 8), GF_LINK_PIX);
	assert_int_equal(cls(n, 2, 8), GF_LINK_PHB);
	assert_int_equal(cls(n, 4, 8), GF_LINK_SYS);
	assert_string_equal(n->nics[0].name, "mlx5_0");
	assert_true(n->nics[0].rdma);
	assert_non_null(n->gpus[0].model);
	assert_string_equal(n->gpus[0].name, "Tesla V100-SXM2-16GB");
	char cpus[64];
	gf_bitmap_format_list(&n->gpus[5].cpus, cpus, sizeof(cpus));
	assert_string_equal(cpus, "20-39");
	gf_node_free(n);
}

static void test_azure_aws_files(void **state)
{
	(void)state;
	/* NDv4: 4 NUMA, 2 GPUs + 2 IB NICs per virtual switch */
	struct gf_node *n =
		load_ok("topologies/nccl-topo-xml/Azure_azhpc-images/"
			"ndv4-topo.xml");
	assert_int_equal(n->ngpus, 8);
	assert_int_equal(n->nnics, 8);
	assert_int_equal(n->nnuma, 4);
	for (int g = 0; g < 8; g++) {
		int idx[8];
		assert_int_equal(gf_link_gpu_nearest_nics(n, g, idx, 8), 2);
		assert_int_equal(gf_link_gpu_best_nic(n, g), GF_LINK_PIX);
		assert_true(n->nics[idx[0]].rdma);
	}
	assert_false(n->nvlink_known);
	assert_true(has_note(n, "lists no NVLink"));
	gf_node_free(n);

	/* p4d: 2 A100 + 1 EFA per switch; EFA is RDMA */
	n = load_ok("topologies/nccl-topo-xml/aws_aws-ofi-nccl/"
		    "p4d-24xl-topo.xml");
	assert_int_equal(n->ngpus, 8);
	assert_int_equal(n->nnics, 4);
	assert_int_equal(cls(n, 0, 1), GF_LINK_PIX);
	assert_int_equal(cls(n, 0, 2), GF_LINK_PHB);
	assert_int_equal(cls(n, 0, 7), GF_LINK_SYS);
	for (int i = 0; i < n->nnics; i++)
		assert_true(n->nics[i].rdma);
	assert_non_null(n->gpus[0].model);
	gf_node_free(n);

	/* NC A100 v4: eth0 (gdr=0) without a PCI address, self NVLinks */
	n = load_ok("topologies/nccl-topo-xml/Azure_azhpc-images/"
		    "ncv4-topo.xml");
	assert_int_equal(n->ngpus, 4);
	assert_int_equal(n->nnics, 1);
	assert_string_equal(n->nics[0].name, "eth0");
	assert_false(n->nics[0].rdma);
	assert_int_equal(cls(n, 0, 4), GF_LINK_PHB);
	assert_int_equal(cls(n, 1, 4), GF_LINK_SYS);
	assert_int_equal(gf_node_nvlinks(n, 0, 1), 0);
	assert_true(has_note(n, "name their own GPU"));
	assert_true(has_note(n, "no PCI address"));
	gf_node_free(n);
}

static void test_nvswitch_amd_vm(void **state)
{
	(void)state;
	/* HGX A100: 6 NVSwitches x 2 links per GPU */
	struct gf_node *n = load_ok("topologies/nccl-topo-xml/aliyun_SimAI/"
				    "topo_8A100_4CX6.xml");
	assert_int_equal(n->ngpus, 8);
	for (int g = 0; g < 8; g++)
		assert_int_equal(n->nvswitch_links[g], 12);
	assert_int_equal(gf_node_nvlinks(n, 0, 7), 12);
	gf_node_free(n);

	/* MI300X: AMD GPUs, one CX-7 beside each, xGMI noted */
	n = load_ok("topologies/nccl-topo-xml/ROCm_rccl/topo_8p_940.xml");
	assert_int_equal(n->ngpus, 8);
	assert_int_equal(n->nnics, 8);
	for (int g = 0; g < 8; g++) {
		assert_int_equal(n->gpus[g].vendor, GF_VENDOR_AMD);
		assert_int_equal(gf_link_gpu_best_nic(n, g), GF_LINK_PXB);
	}
	assert_true(has_note(n, "xGMI"));
	gf_node_free(n);

	/* A VM as NCCL 2.28 saw it: numaid="-1", no affinity */
	n = load_ok("fixtures/h200/h200-nccl-topo.xml");
	assert_int_equal(n->ngpus, 1);
	assert_int_equal(n->nnuma, 0);
	assert_false(n->gpus[0].locality_known);
	assert_non_null(n->gpus[0].model);
	assert_string_equal(n->gpus[0].bus_id, "0000:00:06.0");
	assert_true(has_note(n, "no CPU affinity"));
	gf_node_free(n);
}

static void test_files_without_gpus(void **state)
{
	(void)state;
	struct gf_node *n;
	struct gf_err e;
	/* g5: bus ids only, NCCL completes them from sysfs */
	assert_int_equal(load_nccl("topologies/nccl-topo-xml/aws_aws-ofi-nccl/"
				   "g5.48xl-topo.xml",
				   &n, &e),
			 GF_ENOGPU);
	assert_non_null(strstr(e.msg, "9 PCI devices are listed without a "
				      "class"));
	gf_node_free(n);
	/* p5: NIC switches only, without classes either */
	assert_int_equal(load_nccl("topologies/nccl-topo-xml/aws_aws-ofi-nccl/"
				   "p5.48xl-topo.xml",
				   &n, &e),
			 GF_ENOGPU);
	assert_non_null(strstr(e.msg, "32 PCI devices are listed without"));
	gf_node_free(n);
}

struct bad_case {
	const char *doc;
	int rc;
	const char *msg;
};

#define GPU_PCI(bus)                                                     \
	"<pci busid=\"0000:" bus ":00.0\" class=\"0x030200\" "           \
	"vendor=\"0x10de\" device=\"0x2330\"><gpu dev=\"0\" sm=\"90\"/>" \
	"</pci>"

static void test_malformed(void **state)
{
	(void)state;
	static const struct bad_case cases[] = {
		{ "", GF_EPARSE, "t.xml: empty file" },
		{ "<system", GF_EPARSE, "t.xml:1: malformed XML" },
		{ "<system><cpu numaid=\"0\">", GF_EPARSE, "malformed XML" },
		{ "<topology/>", GF_EPARSE, "expected a <system> root" },
		{ "<!DOCTYPE system [<!ENTITY a \"b\">]><system/>", GF_EPARSE,
		  "DOCTYPE is not allowed" },
		{ "<system>\n<cpu affinity=\"ff\"/></system>", GF_EPARSE,
		  "t.xml:2: <cpu> without numaid=" },
		{ "<system><cpu numaid=\"x\"/></system>", GF_EPARSE,
		  "bad numaid='x'" },
		{ "<system><cpu numaid=\"0\"/><cpu numaid=\"0\"/></system>",
		  GF_EPARSE, "numaid='0' appears twice" },
		{ "<system><cpu numaid=\"0\" affinity=\"fg\"/></system>",
		  GF_EPARSE, "bad affinity='fg'" },
		{ "<system><cpu numaid=\"0\" affinity=\"1,0,0,0,0,0,0,0,0,0,0,0,"
		  "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\"/></system>",
		  GF_ETOOBIG, "more than 1024 CPUs" },
		{ "<system><cpu numaid=\"0\"><pci class=\"0x030200\"/></cpu>"
		  "</system>",
		  GF_EPARSE, "<pci> without busid=" },
		{ "<system><cpu numaid=\"0\"><pci busid=\"zz\"/></cpu>"
		  "</system>",
		  GF_EPARSE, "bad busid='zz'" },
		{ "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" "
		  "class=\"0xq\"/></cpu></system>",
		  GF_EPARSE, "bad class='0xq'" },
		{ "<system><cpu numaid=\"0\">" GPU_PCI("01")
			  GPU_PCI("01") "</cpu></system>",
		  GF_EPARSE, "two GPUs at PCI bus id 0000:01:00.0" },
		{ "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" "
		  "class=\"0x030200\"><gpu><nvlink count=\"2\"/></gpu></pci>"
		  "</cpu></system>",
		  GF_EPARSE, "<nvlink> without target= or count=" },
		{ "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" "
		  "class=\"0x030200\"><gpu><nvlink target=\"0000:02:00.0\" "
		  "count=\"0\"/></gpu></pci></cpu></system>",
		  GF_EPARSE, "bad count='0'" },
		{ "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" "
		  "class=\"0x020000\"><nic><net/></nic></pci></cpu></system>",
		  GF_EPARSE, "<net> without name=" },
		{ "<system><cpu numaid=\"0\"/></system>", GF_ENOGPU,
		  "no GPU in 't.xml'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gf_node *n = gf_node_new();
		struct gf_err e;
		gf_err_clear(&e);
		int rc = gf_nccl_xml_load(n, NULL, cases[i].doc,
					  strlen(cases[i].doc), "t.xml", &e);
		if (rc != cases[i].rc || !strstr(e.msg, cases[i].msg))
			print_message("case %zu: rc %d '%s'\n", i, rc, e.msg);
		assert_int_equal(rc, cases[i].rc);
		assert_non_null(strstr(e.msg, cases[i].msg));
		assert_null(strchr(e.msg, '\n'));
		gf_node_free(n);
	}
}

/* Limits: nesting, GPU count. */
static void test_limits(void **state)
{
	(void)state;
	char doc[16384] = "<system><cpu numaid=\"0\">";
	size_t l = strlen(doc);
	for (int i = 0; i < 20; i++)
		l += (size_t)snprintf(doc + l, sizeof(doc) - l,
				      "<pci busid=\"0000:%02x:00.0\" "
				      "class=\"0x060400\">",
				      i + 1);
	l += (size_t)snprintf(doc + l, sizeof(doc) - l, GPU_PCI("40"));
	for (int i = 0; i < 20; i++)
		l += (size_t)snprintf(doc + l, sizeof(doc) - l, "</pci>");
	snprintf(doc + l, sizeof(doc) - l, "</cpu></system>");
	struct gf_node *n = gf_node_new();
	struct gf_err e;
	assert_int_equal(
		gf_nccl_xml_load(n, NULL, doc, strlen(doc), "deep", &e),
		GF_ETOOBIG);
	assert_non_null(strstr(e.msg, "nested <pci> levels"));
	gf_node_free(n);

	l = (size_t)snprintf(doc, sizeof(doc), "<system><cpu numaid=\"0\">");
	for (int i = 0; i < 65; i++)
		l += (size_t)snprintf(doc + l, sizeof(doc) - l,
				      "<pci busid=\"0000:%02x:00.0\" "
				      "class=\"0x030200\"/>",
				      i + 1);
	snprintf(doc + l, sizeof(doc) - l, "</cpu></system>");
	n = gf_node_new();
	assert_int_equal(
		gf_nccl_xml_load(n, NULL, doc, strlen(doc), "many", &e),
		GF_ETOOBIG);
	assert_non_null(strstr(e.msg, "more than 64 GPUs"));
	gf_node_free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cubemesh_matrix),
		cmocka_unit_test(test_azure_aws_files),
		cmocka_unit_test(test_nvswitch_amd_vm),
		cmocka_unit_test(test_files_without_gpus),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests_name("nccl", tests, NULL, NULL);
}
