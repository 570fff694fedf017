/*
 * test_topo.c - the hwloc loader on the recorded topologies: the facts
 * reference/topology.md states for each (what nvidia-smi prints on those
 * machines), and one-line errors for bad input.
 */
#include <sys/stat.h>

#include <gpufleet/link.h>
#include <gpufleet/template.h>

#include "helpers.h"
#include "topo/render.h"
#include "topo/source.h"
#include "topo/this_system.h"

#define HW  "topologies/hwloc-xml/"
#define SYN "topologies/synthetic/"

static enum gf_link_class cls(const struct gf_node *n, int a, int b)
{
	return gf_link_between(n, a, b, false).cls;
}

static void test_dgx2(void **state)
{
	(void)state;
	struct gf_node *n = load_shared(HW "open-mpi_hwloc/nvidiaDGX2.xml");
	assert_int_equal(n->ngpus, 16);
	assert_int_equal(n->nnics, 0); /* NICs were removed from the export */
	/* NVIDIA's DGX-2 `nvidia-smi topo -mp`: 0-1 PIX, 0-2/0-3 PXB,
	 * 0-4..7 NODE, 0-8..15 SYS */
	assert_int_equal(gf_link_between(n, 0, 1, true).cls, GF_LINK_PIX);
	assert_int_equal(gf_link_between(n, 0, 2, true).cls, GF_LINK_PXB);
	assert_int_equal(gf_link_between(n, 0, 3, true).cls, GF_LINK_PXB);
	for (int g = 4; g < 8; g++)
		assert_int_equal(gf_link_between(n, 0, g, true).cls,
				 GF_LINK_NODE);
	for (int g = 8; g < 16; g++)
		assert_int_equal(gf_link_between(n, 0, g, true).cls,
				 GF_LINK_SYS);
	/* `topo -m`: six links into the NVSwitch fabric, NV6 everywhere */
	for (int a = 0; a < 16; a++)
		for (int b = 0; b < 16; b++)
			if (a != b)
				assert_int_equal(gf_node_nvlinks(n, a, b), 6);
	gf_node_free(n);
}

static void test_dgx_a100_synthetic(void **state)
{
	(void)state;
	struct gf_node *n = load_shared(SYN "dgx-a100-like-synthetic.xml");
	assert_int_equal(n->ngpus, 8);
	assert_int_equal(n->nnics, 10);
	static const char *const cpus[4] = { "48-63,176-191", "16-31,144-159",
					     "112-127,240-255",
					     "80-95,208-223" };
	char got[64];
	for (int g = 0; g < 8; g++) {
		gf_bitmap_format_list(&n->gpus[g].cpus, got, sizeof(got));
		assert_string_equal(got, cpus[g / 2]);
	}
	/* GPU pair <-> its two NICs PXB, everything else SYS */
	for (int g = 0; g < 8; g++)
		for (int d = 0; d < 18; d++) {
			if (d == g)
				continue;
			int pair = g / 2;
			bool same =
				d < 8 ? d / 2 == pair
				      : (d - 8 < 4 ? (d - 8) / 2 == pair
						   : (d - 8 >= 6 &&
						      (d - 8 - 2) / 2 == pair));
			assert_int_equal(cls(n, g, d),
					 same ? GF_LINK_PXB : GF_LINK_SYS);
		}
	gf_node_free(n);
}

static void test_hgx_h100_synthetic(void **state)
{
	(void)state;
	struct gf_node *n = load_shared(SYN "hgx-h100-like-synthetic.xml");
	assert_int_equal(n->ngpus, 8);
	assert_int_equal(n->nnics, 8);
	for (int g = 0; g < 8; g++)
		for (int k = 0; k < 8; k++) {
			enum gf_link_class want = g == k ? GF_LINK_PIX
						  : g / 4 == k / 4
							  ? GF_LINK_NODE
							  : GF_LINK_SYS;
			assert_int_equal(cls(n, g, 8 + k), want);
		}
	gf_node_free(n);
}

static void test_lassen(void **state)
{
	(void)state;
	struct gf_node *n = load_shared(HW "LLNL_mpibind/coral-lassen.xml");
	assert_int_equal(n->ngpus, 4);
	assert_int_equal(n->nnics, 4);
	assert_string_equal(n->nics[0].name, "mlx5_0");
	assert_int_equal(cls(n, 4, 5), GF_LINK_PIX); /* dual-port card */
	assert_int_equal(cls(n, 0, 1), GF_LINK_PIX);
	assert_int_equal(cls(n, 0, 4), GF_LINK_NODE);
	assert_int_equal(cls(n, 0, 2), GF_LINK_SYS);
	assert_int_equal(cls(n, 0, 6), GF_LINK_SYS);
	/* NUMA os indexes 0 and 8 */
	assert_true(gf_bitmap_isset(&n->gpus[2].mems, 8));
	gf_node_free(n);
}

static void test_g4dn_and_pascal(void **state)
{
	(void)state;
	struct gf_node *n = load_shared(HW "LLNL_mpibind/g4dnmetal.xml");
	assert_int_equal(n->ngpus, 8);
	assert_int_equal(cls(n, 0, 1), GF_LINK_PHB); /* 2 per host bridge */
	assert_int_equal(cls(n, 0, 2), GF_LINK_NODE);
	assert_int_equal(cls(n, 0, 4), GF_LINK_SYS);
	assert_string_equal(n->nics[0].name, "rdmap197s0"); /* EFA */
	assert_int_equal(cls(n, 4, 8), GF_LINK_NODE);
	assert_int_equal(cls(n, 0, 8), GF_LINK_SYS);
	gf_node_free(n);
	n = load_shared(HW "LLNL_mpibind/cts1-pascal.xml");
	assert_int_equal(n->ngpus, 2);
	assert_int_equal(cls(n, 0, 1), GF_LINK_PIX);
	assert_int_equal(cls(n, 0, 2), GF_LINK_PIX);
	assert_int_equal(cls(n, 1, 2), GF_LINK_PIX);
	gf_node_free(n);
}

static void test_power8_nvlink(void **state)
{
	(void)state;
	struct gf_node *n =
		load_shared(HW "open-mpi_hwloc/power8gpudistances.xml");
	assert_int_equal(n->ngpus, 4);
	/* 40 GB/s between pairs = 2 NVLink 1.0 links */
	assert_int_equal(gf_node_nvlinks(n, 0, 1), 2);
	assert_int_equal(gf_node_nvlinks(n, 2, 3), 2);
	assert_int_equal(gf_node_nvlinks(n, 0, 2), 0);
	assert_int_equal(cls(n, 0, 2), GF_LINK_SYS);
	gf_node_free(n);
}

static void test_amd_nodes(void **state)
{
	(void)state;
	struct gf_node *n = load_shared(HW "LLNL_mpibind/epyc-corona-p2.xml");
	assert_int_equal(n->ngpus, 8); /* the BMC's VGA is not a GPU */
	assert_int_equal(n->gpus[0].vendor, GF_VENDOR_AMD);
	assert_int_equal(n->nnics, 1);
	assert_int_equal(cls(n, 6, 8), GF_LINK_PHB); /* mlx5_0 beside c3:00 */
	assert_int_equal(cls(n, 0, 8), GF_LINK_SYS);
	gf_node_free(n);
	n = load_shared(HW "LLNL_mpibind/eas-tioga.xml");
	assert_int_equal(n->ngpus, 8);
	/* no RDMA device: the Slingshot netdevs stand in as NICs */
	assert_false(n->nics[1].rdma);
	assert_string_equal(n->nics[1].name, "hsi0");
	gf_node_free(n);
}

static int load_err(const char *path, struct gf_err *e)
{
	struct gf_node *n = gf_node_new();
	struct gf_topo_source src = { .xml_path = path };
	gf_err_clear(e);
	int rc = gf_topo_load(n, &src, e);
	gf_node_free(n);
	return rc;
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		print_message("shared data absent: %s\n", path);
		skip();
	}
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc(*len + 1);
	assert_int_equal(fread(buf, 1, *len, f), *len);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

static void test_bad_input(void **state)
{
	(void)state;
	struct gf_err e;
	char dir[] = "/tmp/gf-topo-XXXXXX", path[256], src[512];
	assert_non_null(mkdtemp(dir));

	snprintf(path, sizeof(path), "%s/missing.xml", dir);
	assert_true(load_err(path, &e) < 0);
	assert_non_null(strstr(e.msg, "missing.xml"));
	assert_non_null(strstr(e.msg, "No such file"));

	snprintf(path, sizeof(path), "%s/page.xml", dir);
	write_file(path, "<html><body>hi</body></html>\n", 29);
	assert_int_equal(load_err(path, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, "not an hwloc XML"));

	snprintf(path, sizeof(path), "%s/bin.xml", dir);
	write_file(path, "<topology\0\1\2", 12);
	assert_int_equal(load_err(path, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, "binary"));

	snprintf(path, sizeof(path), "%s/empty.xml", dir);
	write_file(path, "", 0);
	assert_int_equal(load_err(path, &e), GF_EPARSE);

	shared_path(src, sizeof(src), HW "LLNL_mpibind/cts1-pascal.xml");
	size_t len;
	char *xml = slurp(src, &len);
	snprintf(path, sizeof(path), "%s/truncated.xml", dir);
	write_file(path, xml, len / 2);
	assert_int_equal(load_err(path, &e), GF_ETOPO);
	assert_non_null(strstr(e.msg, "truncated.xml"));

	/* hwloc 2.9 segfaults on an object without complete_cpuset (found
	 * by tests/tools/xml_mutate): a clear error, no crash */
	char *cc = strstr(xml, "complete_cpuset=");
	assert_non_null(cc);
	cc[5] = 'u';
	snprintf(path, sizeof(path), "%s/crash.xml", dir);
	write_file(path, xml, len);
	assert_int_equal(load_err(path, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, "hwloc crashed parsing it"));
	cc[5] = 'e';

	char *v = strstr(xml, "version=\"2.0\"");
	assert_non_null(v);
	v[9] = '3';
	snprintf(path, sizeof(path), "%s/v3.xml", dir);
	write_file(path, xml, len);
	assert_int_equal(load_err(path, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, "version 3.0"));
	free(xml);

	shared_path(src, sizeof(src),
		    HW "open-mpi_hwloc/96em64t-4n4d3ca2co-pci.xml");
	assert_int_equal(load_err(src, &e), GF_ENOGPU);
	assert_non_null(strstr(e.msg, "no GPU"));

	assert_int_equal(load_err(dir, &e), GF_EINVAL); /* a directory */
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Every renderer, given less room than its page needs, fails with
 * GF_ETOOBIG instead of returning a truncated page. */
/* A small valid topology (one package, two PUs, an H100 on PCI), the
 * second PU's os_index attribute as given (issue 20's F7). */
static void write_small_xml(const char *path, const char *pu1_index)
{
	char xml[4096];
	int n = snprintf(
		xml, sizeof(xml),
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
		"<topology version=\"2.0\">\n"
		" <object type=\"Machine\" os_index=\"0\" cpuset=\"0x3\" "
		"complete_cpuset=\"0x3\" allowed_cpuset=\"0x3\" nodeset=\"0x1\" "
		"complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"1\">\n"
		"  <object type=\"Package\" os_index=\"0\" cpuset=\"0x3\" "
		"complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
		"gp_index=\"2\">\n"
		"   <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x3\" "
		"complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
		"gp_index=\"3\" local_memory=\"17179869184\"/>\n"
		"   <object type=\"Core\" os_index=\"0\" cpuset=\"0x3\" "
		"complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
		"gp_index=\"4\">\n"
		"    <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" "
		"complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
		"gp_index=\"5\"/>\n"
		"    <object type=\"PU\" %s cpuset=\"0x2\" complete_cpuset=\"0x2\" "
		"nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"6\"/>\n"
		"   </object>\n"
		"   <object type=\"Bridge\" gp_index=\"7\" bridge_type=\"0-1\" "
		"depth=\"0\" bridge_pci=\"0000:[81-81]\">\n"
		"    <object type=\"PCIDev\" gp_index=\"8\" "
		"pci_busid=\"0000:81:00.0\" pci_type=\"0302 [10de:2330] "
		"[10de:16c1] a1\" pci_link_speed=\"0.000000\"/>\n"
		"   </object>\n"
		"  </object>\n"
		" </object>\n"
		"</topology>\n",
		pu1_index);
	assert_true(n > 0 && (size_t)n < sizeof(xml));
	write_file(path, xml, (size_t)n);
}

/* A PU without os_index made hwloc take 10-30 s and ~535 MiB (F7): the
 * caged probe child refuses it, naming the file and the limits (the
 * os_index check; in the ASan build, whose allocator dies at the address
 * space limit, the memory limit). */
static void test_pu_without_os_index(void **state)
{
	(void)state;
	struct gf_err e;
	char dir[] = "/tmp/gf-topo-XXXXXX", path[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/good.xml", dir);
	write_small_xml(path, "os_index=\"1\"");
	assert_int_equal(load_err(path, &e), 0);
	unlink(path);

	snprintf(path, sizeof(path), "%s/no-os-index.xml", dir);
	write_small_xml(path, "");
	assert_int_equal(load_err(path, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, path));
	assert_non_null(strstr(e.msg, "os_index"));
	assert_non_null(strstr(e.msg, "limit"));
	unlink(path);

	snprintf(path, sizeof(path), "%s/huge-os-index.xml", dir);
	write_small_xml(path, "os_index=\"4294967294\"");
	assert_int_equal(load_err(path, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, "os_index"));
	unlink(path);
	rmdir(dir);
}

static void test_render_caps(void **state)
{
	(void)state;
	struct gf_node *n = gf_node_new();
	struct gf_err e;
	assert_int_equal(gf_template_build("hgx-h100", n, &e), 0);
	struct gf_finding f[GF_MAX_FINDINGS];
	int nf = gf_findings_compute(n, f, GF_MAX_FINDINGS);
	for (int kind = 0; kind < 3; kind++) {
		struct gf_buf b;
		gf_buf_init(&b, 1u << 20);
		int rc = kind == 0   ? gf_render_matrix(n, false, &b)
			 : kind == 1 ? gf_render_topo_text(n, false, f, nf, &b)
				     : gf_render_topo_json(n, false, f, nf, &b);
		assert_int_equal(rc, 0);
		size_t full = b.len;
		gf_buf_release(&b);
		for (size_t cap = 1; cap < full; cap += full / 97 + 1) {
			gf_buf_init(&b, cap);
			rc = kind == 0 ? gf_render_matrix(n, false, &b)
			     : kind == 1
				     ? gf_render_topo_text(n, false, f, nf, &b)
				     : gf_render_topo_json(n, false, f, nf, &b);
			assert_int_equal(rc, GF_ETOOBIG);
			gf_buf_release(&b);
		}
	}
	gf_node_free(n);
}

static void test_every_recording_loads(void **state)
{
	(void)state;
	static const char *const files[] = {
		HW "LLNL_mpibind/coral-lassen.xml",
		HW "LLNL_mpibind/cts1-pascal.xml",
		HW "LLNL_mpibind/eas-tioga.xml",
		HW "LLNL_mpibind/epyc-corona-p2.xml",
		HW "LLNL_mpibind/g4dnmetal.xml",
		HW "open-mpi_hwloc/24em64t-2n6c2t-pci.xml",
		HW "open-mpi_hwloc/32em64t-2n8c2t-pci-wholeio.xml",
		HW "open-mpi_hwloc/nvidiaDGX2.xml",
		HW "open-mpi_hwloc/power8gpudistances.xml",
		SYN "dgx-a100-like-synthetic.xml",
		SYN "hgx-h100-like-synthetic.xml",
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct gf_node *n = load_shared(files[i]);
		assert_true(n->ngpus > 0);
		assert_false(n->this_system);
		gf_node_free(n);
	}
}

static void put(const char *root, const char *rel, const char *text)
{
	char path[512], cmd[600];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A machine as sysfs shows it: its CPU and NUMA lists, host name, and
 * PCI functions by class and vendor (only NVIDIA and AMD compute GPUs
 * count, as in the loader). */
static void test_live_read(void **state)
{
	(void)state;
	char root[] = "/tmp/gf-live-XXXXXX";
	assert_non_null(mkdtemp(root));
	put(root, "sys/devices/system/cpu/online", "0-3,8\n");
	put(root, "sys/devices/system/node/online", "0-1\n");
	put(root, "proc/sys/kernel/hostname", "n1\n");
	put(root, "sys/bus/pci/devices/0000:18:00.0/vendor", "0x10de\n");
	put(root, "sys/bus/pci/devices/0000:18:00.0/class", "0x030200\n");
	put(root, "sys/bus/pci/devices/0000:03:00.0/vendor", "0x1a03\n");
	put(root, "sys/bus/pci/devices/0000:03:00.0/class", "0x030000\n");
	put(root, "sys/bus/pci/devices/0000:c1:00.0/vendor", "0x1002\n");
	put(root, "sys/bus/pci/devices/0000:c1:00.0/class", "0x038000\n");
	put(root, "sys/bus/pci/devices/0000:0a:00.0/vendor", "0x10de\n");
	put(root, "sys/bus/pci/devices/0000:0a:00.0/class", "0x068000\n");
	struct gf_live l;
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_live_read(&l, root, &e), 0);
	char b[64];
	gf_bitmap_format_list(&l.cpus, b, sizeof(b));
	assert_string_equal(b, "0-3,8");
	gf_bitmap_format_list(&l.numa, b, sizeof(b));
	assert_string_equal(b, "0-1");
	assert_string_equal(l.hostname, "n1");
	assert_int_equal(l.ngpus, 2); /* not the BMC's VGA, not NVSwitch */
	assert_string_equal(l.gpus[0], "0000:18:00.0");
	assert_string_equal(l.gpus[1], "0000:c1:00.0");
	assert_string_equal(l.gpus_from, "sysfs");
	/* no NUMA in the kernel: node 0; no CPU list: an error naming it */
	char rm[600];
	snprintf(rm, sizeof(rm), "rm -rf '%s/sys/devices/system/node'", root);
	assert_int_equal(system(rm), 0);
	assert_int_equal(gf_live_read(&l, root, &e), 0);
	gf_bitmap_format_list(&l.numa, b, sizeof(b));
	assert_string_equal(b, "0");
	snprintf(rm, sizeof(rm), "rm -rf '%s/sys/devices/system/cpu'", root);
	assert_int_equal(system(rm), 0);
	assert_int_equal(gf_live_read(&l, root, &e), GF_ETOPO);
	assert_non_null(strstr(e.msg, "sys/devices/system/cpu/online"));
	snprintf(rm, sizeof(rm), "rm -rf '%s'", root);
	assert_int_equal(system(rm), 0);
}

/* The machine a recording describes, as gf_live_read would see it. */
static void live_of(const struct gf_node *n, struct gf_live *l)
{
	memset(l, 0, sizeof(*l));
	l->cpus = n->cpus;
	for (int i = 0; i < n->nnuma; i++)
		gf_bitmap_set(&l->numa, n->numa[i].os_index);
	for (int i = 0; i < n->ngpus; i++)
		snprintf(l->gpus[l->ngpus++], 16, "%s", n->gpus[i].bus_id);
	snprintf(l->hostname, sizeof(l->hostname), "%s", n->hostname);
	l->gpus_from = "sysfs";
}

/*
 * A recording against the machine: equal passes; each difference is
 * named (CPUs, NUMA nodes, GPUs either way, the host name); a machine of
 * the same shape is told apart by its name alone.
 */
static void test_this_system_check(void **state)
{
	(void)state;
	struct gf_node *n =
		load_shared(HW "open-mpi_hwloc/32em64t-2n8c2t-pci-wholeio.xml");
	assert_string_equal(n->hostname, "conan");
	struct gf_live l;
	struct gf_err e;
	gf_err_clear(&e);
	live_of(n, &l);
	assert_int_equal(gf_this_system_check(n, "rec.xml", &l, &e), 0);
	snprintf(l.hostname, sizeof(l.hostname), "conan.cluster.example");
	assert_int_equal(gf_this_system_check(n, "rec.xml", &l, &e), 0);

	/* the same shape, another machine */
	snprintf(l.hostname, sizeof(l.hostname), "twin");
	assert_int_equal(gf_this_system_check(n, "rec.xml", &l, &e),
			 GF_ENOTTHIS);
	assert_string_equal(e.msg, "'rec.xml' is not a recording of this "
				   "machine: host name 'conan' recorded, "
				   "'twin' here");

	/* a 2-CPU machine of one NUMA node, one other GPU, no name */
	memset(&l, 0, sizeof(l));
	gf_bitmap_parse_list(&l.cpus, "0-1");
	gf_bitmap_set(&l.numa, 0);
	snprintf(l.gpus[0], 16, "0000:00:1f.7");
	l.ngpus = 1;
	l.gpus_from = "NVML";
	assert_int_equal(gf_this_system_check(n, "rec.xml", &l, &e),
			 GF_ENOTTHIS);
	assert_non_null(strstr(e.msg, "32 CPUs 0-31 recorded, 2 CPUs 0-1 "
				      "here; NUMA nodes 0-1 recorded, 0 "
				      "here; GPU "));
	assert_non_null(strstr(e.msg, "recorded, not here (3 of 3 recorded "
				      "GPUs not in NVML); GPU 0000:00:1f.7 "
				      "here (NVML), not recorded"));
	assert_non_null(strstr(e.msg, "host name 'conan' recorded, '' here"));
	gf_node_free(n);
}

/* The loader's callers get the check: --xml FILE --this-system with
 * another machine's recording is refused (this machine is not 'conan',
 * with its 32 CPUs and 3 GPUs at those bus ids); without this_system the
 * recording loads as what it is. */
static void test_this_system_load(void **state)
{
	(void)state;
	char path[512];
	shared_path(path, sizeof(path),
		    HW "open-mpi_hwloc/32em64t-2n8c2t-pci-wholeio.xml");
	if (access(path, R_OK) != 0)
		skip();
	struct gf_node_source src = { .xml = path, .this_system = true };
	struct gf_node *n = NULL;
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_node_source_load(&src, &n, &e), GF_ENOTTHIS);
	assert_null(n);
	assert_non_null(strstr(e.msg, "is not a recording of this machine: "));
	src.this_system = false;
	assert_int_equal(gf_node_source_load(&src, &n, &e), 0);
	assert_false(n->this_system);
	gf_node_free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dgx2),
		cmocka_unit_test(test_dgx_a100_synthetic),
		cmocka_unit_test(test_hgx_h100_synthetic),
		cmocka_unit_test(test_lassen),
		cmocka_unit_test(test_g4dn_and_pascal),
		cmocka_unit_test(test_power8_nvlink),
		cmocka_unit_test(test_amd_nodes),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_pu_without_os_index),
		cmocka_unit_test(test_render_caps),
		cmocka_unit_test(test_every_recording_loads),
		cmocka_unit_test(test_live_read),
		cmocka_unit_test(test_this_system_check),
		cmocka_unit_test(test_this_system_load),
	};
	return cmocka_run_group_tests_name("topo", tests, NULL, NULL);
}
