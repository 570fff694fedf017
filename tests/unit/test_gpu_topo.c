/*
 * test_gpu_topo.c - the GPU choice inside a node: NVIDIA's hybrid
 * cube-mesh (DGX-1V, Azure NDv2) read from an NCCL topology file, also
 * with its GPUs renumbered by its generator's --perm, so the answer must
 * come from the links and never from the numbering; NIC closeness for
 * multi-node requests; and the engine using the choice.
 */
#include <gpufleet/gpu_topo.h>
#include <gpufleet/link.h>
#include <gpufleet/sched.h>

#include "helpers.h"
#include "topo/nccl_xml.h"

static struct gf_node *cube_from(const char *doc, size_t len)
{
	struct gf_node *n = gf_node_new();
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_nccl_xml_load(n, NULL, doc, len, "cube-mesh", &e);
	if (rc)
		print_message("%s\n", e.msg);
	assert_int_equal(rc, 0);
	return n;
}

static char *slurp(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap);
	size_t got;
	while ((got = fread(b + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			b = realloc(b, cap *= 2);
	}
	*len = n;
	return b;
}

/* The shared cube-mesh file, or, with perm, the generator's output for
 * that renumbering (skip when python3 or the data is absent). */
static struct gf_node *cube(const char *perm)
{
	char path[512];
	FILE *f;
	if (perm == NULL) {
		shared_path(path, sizeof(path),
			    "topologies/synthetic/"
			    "dgx1v-cubemesh-nccl-synthetic.xml");
		f = fopen(path, "rb");
	} else {
		char cmd[700];
		shared_path(path, sizeof(path),
			    "topologies/synthetic/gen_nccl_cubemesh.py");
		if (access(path, R_OK) != 0 ||
		    system("python3 -c 'pass' 2>/dev/null") != 0) {
			print_message("python3 or %s absent\n", path);
			skip();
		}
		snprintf(cmd, sizeof(cmd), "python3 '%s' --perm %s", path,
			 perm);
		f = popen(cmd, "r");
	}
	if (f == NULL) {
		print_message("shared data absent: %s\n", path);
		skip();
	}
	size_t len;
	char *doc = slurp(f, &len);
	if (perm)
		assert_int_equal(pclose(f), 0);
	else
		fclose(f);
	struct gf_node *n = cube_from(doc, len);
	free(doc);
	return n;
}

static void assert_all_nvlink(const struct gf_node *n, const int *g, int k)
{
	for (int a = 0; a < k; a++)
		for (int b = a + 1; b < k; b++)
			assert_true(gf_node_nvlinks(n, g[a], g[b]) > 0);
}

static void check_cube(const char *perm)
{
	struct gf_node *n = cube(perm);
	assert_int_equal(n->ngpus, 8);
	struct gf_gpu_topo t;
	struct gf_err e;
	assert_int_equal(gf_gpu_topo_from_node(n, &t, &e), 0);
	assert_false(t.uniform);
	int out[8];
	/* an empty node: a fully NVLink-connected quad */
	assert_int_equal(gf_gpu_topo_choose(&t, 0xff, 4, false, out), 0);
	assert_all_nvlink(n, out, 4);
	/* a pair: double NVLink */
	assert_int_equal(gf_gpu_topo_choose(&t, 0xff, 2, false, out), 0);
	assert_int_equal(gf_node_nvlinks(n, out[0], out[1]), 2);
	/* GPUs 0 and 5 taken (as numbered in this file): still NV2 */
	uint32_t mask = 0xff & ~(1u << 0) & ~(1u << 5);
	assert_int_equal(gf_gpu_topo_choose(&t, mask, 2, false, out), 0);
	assert_true(out[0] != 0 && out[0] != 5 && out[1] != 0 && out[1] != 5);
	assert_int_equal(gf_node_nvlinks(n, out[0], out[1]), 2);
	/* GPU 0 taken: its quad is broken, the other socket's is whole */
	struct gf_gpu_set_score sc;
	assert_int_equal(gf_gpu_topo_choose(&t, 0xff & ~1u, 4, false, out), 0);
	gf_gpu_topo_score(&t, out, 4, &sc);
	assert_true(sc.min_pair >= GF_GQ_NVLINK);
	assert_all_nvlink(n, out, 4);
	gf_node_free(n);
}

static void test_cubemesh_choice(void **state)
{
	(void)state;
	check_cube(NULL);
}

/* The generator's renumbering: GPU i of the matrix at PCI slot perm[i]. */
static void test_cubemesh_renumbered(void **state)
{
	(void)state;
	check_cube("3,6,0,5,2,7,4,1");
	check_cube("7,6,5,4,3,2,1,0");
}

/* Hand-built: two PCIe switches, a NIC beside the second; a multi-node
 * pair takes the switch with the NIC, a plain pair the first switch. */
static void test_nic_for_multinode(void **state)
{
	(void)state;
	struct gf_gpu_topo t;
	memset(&t, 0, sizeof(t));
	t.ngpus = 4;
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++)
			t.pair[a][b] = a == b		? 0
				       : a / 2 == b / 2 ? GF_GQ_PIX
							: GF_GQ_PHB;
	t.nic[0] = t.nic[1] = GF_GQ_PHB;
	t.nic[2] = t.nic[3] = GF_GQ_PIX;
	int out[4];
	assert_int_equal(gf_gpu_topo_choose(&t, 0xf, 2, false, out), 0);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 1);
	assert_int_equal(gf_gpu_topo_choose(&t, 0xf, 2, true, out), 0);
	assert_int_equal(out[0], 2);
	assert_int_equal(out[1], 3);
	/* not enough free */
	assert_int_equal(gf_gpu_topo_choose(&t, 0x1, 2, false, out),
			 GF_ENOTFOUND);
}

/* The engine: a 4-GPU request on a cube-mesh node gets a NVLink quad,
 * then a 2-GPU one an NV2 pair among the rest; released, all is free. */
static void test_engine_uses_topology(void **state)
{
	(void)state;
	struct gf_node *n = cube("3,6,0,5,2,7,4,1");
	struct gf_gpu_topo t;
	struct gf_err e;
	assert_int_equal(gf_gpu_topo_from_node(n, &t, &e), 0);
	struct gf_cluster c;
	gf_cluster_init(&c);
	int m = gf_cluster_model(&c, "v100");
	assert_int_equal(gf_cluster_add(&c, "dgx1", 80000, 512000, 8, m), 0);
	assert_int_equal(gf_cluster_set_topo(&c, 0, &t), 0);
	struct gf_sched *s;
	assert_int_equal(gf_sched_new(&c, GF_POLICY_BESTFIT, NULL, 0, 1, 1, &s),
			 0);
	struct gf_req four = { .cpu = 1000, .ngpus = 4, .gpu_milli = 1000 };
	struct gf_req two = { .cpu = 1000, .ngpus = 2, .gpu_milli = 1000 };
	struct gf_placement p4, p2;
	assert_int_equal(gf_sched_place(s, &four, &p4), 0);
	assert_all_nvlink(n, p4.gpus, 4);
	assert_int_equal(gf_sched_place(s, &two, &p2), 0);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++)
			assert_int_not_equal(p2.gpus[i], p4.gpus[j]);
	assert_true(gf_node_nvlinks(n, p2.gpus[0], p2.gpus[1]) >= 1);
	char msg[256];
	assert_int_equal(gf_sched_check(s, msg, sizeof(msg)), 0);
	assert_int_equal(gf_sched_unplace(s, &two, &p2), 0);
	assert_int_equal(gf_sched_unplace(s, &four, &p4), 0);
	assert_int_equal(c.nodes[0].nfree, 8);
	gf_sched_free(s);
	gf_cluster_release(&c);
	gf_node_free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cubemesh_choice),
		cmocka_unit_test(test_cubemesh_renumbered),
		cmocka_unit_test(test_nic_for_multinode),
		cmocka_unit_test(test_engine_uses_topology),
	};
	return cmocka_run_group_tests_name("gpu-topo", tests, NULL, NULL);
}
