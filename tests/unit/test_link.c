/*
 * test_link.c - the PCIe classifier and NVLink counting on hand-built
 * trees, where every expected class follows from the definitions.
 */
#include <gpufleet/link.h>

#include "helpers.h"

/* Two sockets (NUMA 0: CPUs 0-3, NUMA 1: CPUs 4-7). */
static int add_loc(struct gf_node *n, const char *cpus, int numa)
{
	struct gf_locality l = { .known = true };
	gf_bitmap_parse_list(&l.cpus, cpus);
	gf_bitmap_zero(&l.mems);
	gf_bitmap_set(&l.mems, numa);
	return gf_node_add_loc(n, &l);
}

static int add(struct gf_node *n, int parent, enum gf_pci_kind k, int loc,
	       int bus)
{
	struct gf_pci_obj o;
	memset(&o, 0, sizeof(o));
	o.parent = parent;
	o.kind = k;
	o.loc = loc;
	o.bus = (uint8_t)bus;
	return gf_node_add_pci(n, &o);
}

/*
 * socket 0: HB0 - RP - SW_UP - {DN_a - A, DN_b - B, DN_c - SW2_UP -
 *           {DN - C}}, HB0 - RP2 - D;  HB1 - E
 * socket 1: HB2 - F
 */
static struct gf_node *tree(int *A, int *B, int *C, int *D, int *E, int *F)
{
	struct gf_node *n = gf_node_new();
	int l0 = add_loc(n, "0-3", 0), l0b = add_loc(n, "0-3", 0);
	int l1 = add_loc(n, "4-7", 1);
	int hb0 = add(n, -1, GF_PCI_HOSTBRIDGE, l0, 0);
	int rp = add(n, hb0, GF_PCI_BRIDGE, -1, 1);
	int up = add(n, rp, GF_PCI_BRIDGE, -1, 2);
	*A = add(n, add(n, up, GF_PCI_BRIDGE, -1, 3), GF_PCI_DEVICE, -1, 4);
	*B = add(n, add(n, up, GF_PCI_BRIDGE, -1, 3), GF_PCI_DEVICE, -1, 5);
	int dnc = add(n, up, GF_PCI_BRIDGE, -1, 3);
	int up2 = add(n, dnc, GF_PCI_BRIDGE, -1, 6);
	*C = add(n, add(n, up2, GF_PCI_BRIDGE, -1, 7), GF_PCI_DEVICE, -1, 8);
	int rp2 = add(n, hb0, GF_PCI_BRIDGE, -1, 9);
	*D = add(n, rp2, GF_PCI_DEVICE, -1, 10);
	int hb1 = add(n, -1, GF_PCI_HOSTBRIDGE, l0b, 11);
	*E = add(n, hb1, GF_PCI_DEVICE, -1, 12);
	int hb2 = add(n, -1, GF_PCI_HOSTBRIDGE, l1, 13);
	*F = add(n, hb2, GF_PCI_DEVICE, -1, 14);
	return n;
}

static void test_pcie_classes(void **state)
{
	(void)state;
	int A, B, C, D, E, F;
	struct gf_node *n = tree(&A, &B, &C, &D, &E, &F);
	assert_int_equal(gf_link_pcie(n, A, B), GF_LINK_PIX); /* one switch */
	assert_int_equal(gf_link_pcie(n, A, C), GF_LINK_PXB); /* two levels */
	assert_int_equal(gf_link_pcie(n, A, D), GF_LINK_PHB); /* root complex */
	assert_int_equal(gf_link_pcie(n, A, E), GF_LINK_NODE);
	assert_int_equal(gf_link_pcie(n, E, F), GF_LINK_SYS);
	assert_int_equal(gf_link_pcie(n, A, A), GF_LINK_PIX);
	/* symmetric */
	assert_int_equal(gf_link_pcie(n, C, A), GF_LINK_PXB);
	assert_int_equal(gf_link_pcie(n, F, E), GF_LINK_SYS);
	gf_node_free(n);
}

static void add_gpu(struct gf_node *n, int pci)
{
	struct gf_gpu g;
	memset(&g, 0, sizeof(g));
	g.pci = pci;
	g.mig_mode = -1;
	g.numa_id = -1;
	assert_true(gf_node_add_gpu(n, &g) >= 0);
}

static void test_nvlink_and_matrix(void **state)
{
	(void)state;
	int A, B, C, D, E, F;
	struct gf_node *n = tree(&A, &B, &C, &D, &E, &F);
	add_gpu(n, F); /* added out of bus order on purpose */
	add_gpu(n, A);
	add_gpu(n, B);
	gf_node_finish(n);
	char msg[128];
	assert_int_equal(gf_node_check(n, msg, sizeof(msg)), 0);
	assert_int_equal(n->gpus[0].pci, A); /* sorted by bus */
	assert_int_equal(n->gpus[2].pci, F);
	assert_string_equal(n->gpus[2].bus_id, "0000:0e:00.0");
	char cpus[32];
	gf_bitmap_format_list(&n->gpus[2].cpus, cpus, sizeof(cpus));
	assert_string_equal(cpus, "4-7");
	/* a direct bridge between 0 and 1, the switch fabric to all */
	n->nvlinks[0][1] = n->nvlinks[1][0] = 4;
	assert_int_equal(gf_node_nvlinks(n, 0, 1), 4);
	n->nvswitch_links[0] = 18;
	n->nvswitch_links[2] = 12;
	assert_int_equal(gf_node_nvlinks(n, 0, 2), 12); /* narrower side */
	assert_int_equal(gf_node_nvlinks(n, 1, 2), 0);
	struct gf_link l = gf_link_between(n, 0, 2, false);
	assert_int_equal(l.cls, GF_LINK_NV);
	char cell[16];
	gf_link_format(l, cell, sizeof(cell));
	assert_string_equal(cell, "NV12");
	l = gf_link_between(n, 0, 2, true); /* -mp: PCIe only */
	assert_int_equal(l.cls, GF_LINK_SYS);
	gf_link_format(gf_link_between(n, 1, 1, false), cell, sizeof(cell));
	assert_string_equal(cell, " X ");
	/* asymmetric NVLink is a broken invariant */
	n->nvlinks[1][0] = 3;
	assert_int_equal(gf_node_check(n, msg, sizeof(msg)), GF_EINVAL);
	assert_string_equal(msg, "nvlinks 0-1 not symmetric");
	gf_node_free(n);
}

static void test_busid_parse(void **state)
{
	(void)state;
	uint16_t d;
	uint8_t b, v, f;
	assert_int_equal(gf_pci_parse_busid("00000000:5D:00.0", &d, &b, &v, &f),
			 0);
	assert_int_equal(b, 0x5d);
	assert_int_equal(gf_pci_parse_busid("0035:03:00.1", &d, &b, &v, &f), 0);
	assert_int_equal(d, 0x35);
	assert_int_equal(f, 1);
	assert_int_equal(gf_pci_parse_busid("18:00.0", &d, &b, &v, &f), 0);
	assert_int_equal(d, 0);
	assert_int_equal(gf_pci_parse_busid("zz", &d, &b, &v, &f), GF_EPARSE);
	assert_int_equal(gf_pci_parse_busid("0000:100:00.0", &d, &b, &v, &f),
			 GF_ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pcie_classes),
		cmocka_unit_test(test_nvlink_and_matrix),
		cmocka_unit_test(test_busid_parse),
	};
	return cmocka_run_group_tests_name("link", tests, NULL, NULL);
}
