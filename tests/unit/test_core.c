/*
 * test_core.c - catalog, templates, findings and the bind planner, on
 * built-in nodes whose expected answers follow from their layout.
 */
#include <gpufleet/bind.h>
#include <gpufleet/catalog.h>
#include <gpufleet/findings.h>
#include <gpufleet/link.h>
#include <gpufleet/template.h>

#include "helpers.h"

static void test_catalog(void **state)
{
	(void)state;
	static const char *const required[] = {
		"a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h100-nvl",
		"h200",	     "gh200",	  "b200",     "a30",	   "a10",
		"l4",	     "l40s",	  "t4",	      "v100-16gb", "v100-32gb",
	};
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		const struct gf_gpu_model *m = gf_catalog_by_id(required[i]);
		assert_non_null(m);
		assert_true(m->memory_mib > 0);
		assert_true(m->pci_device_ids[0] != 0);
		/* every PCI id maps back to its own entry */
		for (int k = 0; k < GF_GPU_MAX_PCI_IDS && m->pci_device_ids[k];
		     k++)
			assert_ptr_equal(
				gf_catalog_by_pci(0x10de, m->pci_device_ids[k]),
				m);
	}
	const struct gf_gpu_model *h = gf_catalog_by_pci(0x10de, 0x2330);
	assert_string_equal(h->id, "h100-sxm");
	assert_true(h->mig);
	assert_int_equal(h->nvlink_links, 18);
	assert_false(gf_catalog_by_id("l4")->mig);
	assert_int_equal(gf_catalog_by_id("a30")->mig_max_instances, 4);
	assert_ptr_equal(gf_catalog_by_name("nvidia h100 80gb hbm3"), h);
	assert_null(gf_catalog_by_pci(0x10de, 0xffff));
	assert_null(gf_catalog_by_id("nope"));
	/* ids are unique */
	for (int i = 0; i < gf_catalog_count(); i++)
		for (int j = i + 1; j < gf_catalog_count(); j++)
			assert_string_not_equal(gf_catalog_at(i)->id,
						gf_catalog_at(j)->id);
}

static struct gf_node *tmpl(const char *name)
{
	struct gf_node *n = gf_node_new();
	struct gf_err e;
	assert_int_equal(gf_template_build(name, n, &e), 0);
	char msg[128];
	assert_int_equal(gf_node_check(n, msg, sizeof(msg)), 0);
	return n;
}

static void test_templates(void **state)
{
	(void)state;
	for (int i = 0; i < gf_template_count(); i++) {
		struct gf_node *n = tmpl(gf_template_name(i));
		assert_true(n->ngpus > 0);
		gf_node_free(n);
	}
	struct gf_node *n = tmpl("hgx-h100");
	assert_int_equal(n->ngpus, 8);
	assert_int_equal(n->nnics, 8);
	assert_int_equal(gf_bitmap_count(&n->cpus), 224);
	for (int g = 0; g < 8; g++) {
		assert_int_equal(gf_link_gpu_best_nic(n, g), GF_LINK_PIX);
		for (int h = 0; h < 8; h++)
			if (g != h)
				assert_int_equal(gf_node_nvlinks(n, g, h), 18);
	}
	gf_node_free(n);
	struct gf_err e;
	n = gf_node_new();
	assert_int_equal(gf_template_build("dgx-9000", n, &e), GF_ENOTFOUND);
	assert_non_null(strstr(e.msg, "hgx-h100"));
	gf_node_free(n);
}

static bool has_finding(const struct gf_finding *f, int nf, const char *code)
{
	for (int i = 0; i < nf; i++)
		if (strcmp(f[i].code, code) == 0)
			return true;
	return false;
}

static void test_findings(void **state)
{
	(void)state;
	struct gf_finding f[GF_MAX_FINDINGS];
	struct gf_node *n = tmpl("hgx-h100");
	assert_int_equal(gf_findings_compute(n, f, GF_MAX_FINDINGS), 0);
	gf_node_free(n);

	n = tmpl("pcie-l40s");
	int nf = gf_findings_compute(n, f, GF_MAX_FINDINGS);
	assert_true(has_finding(f, nf, "nic-sys")); /* GPUs 4-7 */
	assert_true(has_finding(f, nf, "no-nvlink"));
	assert_false(has_finding(f, nf, "gpus-one-socket"));
	assert_non_null(strstr(f[0].msg, "GPU4-7"));
	for (int i = 1; i < nf; i++) /* warnings first */
		assert_true(f[i - 1].sev >= f[i].sev);
	gf_node_free(n);

	n = tmpl("h100-nvl");
	nf = gf_findings_compute(n, f, GF_MAX_FINDINGS);
	assert_true(has_finding(f, nf, "nvlink-partial"));
	gf_node_free(n);

	/* one socket of two holding every GPU */
	n = load_shared("topologies/hwloc-xml/LLNL_mpibind/cts1-pascal.xml");
	nf = gf_findings_compute(n, f, GF_MAX_FINDINGS);
	assert_true(has_finding(f, nf, "gpus-one-socket"));
	gf_node_free(n);
}

static void test_bind_plans(void **state)
{
	(void)state;
	struct gf_node *n = tmpl("hgx-h100");
	struct gf_bind_request r = { .ngpus = 0 };
	struct gf_bind_plan p;
	struct gf_err e;
	char cl[256];

	assert_int_equal(gf_bind_parse_gpus("0,1", &r), 0);
	assert_int_equal(gf_bind_plan(n, &r, &p, &e), 0);
	assert_false(p.spans_numa);
	gf_bitmap_format_list(&p.cpus, cl, sizeof(cl));
	assert_string_equal(cl, "0-55,112-167"); /* all of socket 0 */
	assert_int_equal(p.nnics, 2);
	assert_string_equal(n->nics[p.nics[0]].name, "mlx5_0");
	assert_string_equal(p.env_name[0], "CUDA_VISIBLE_DEVICES");
	assert_string_equal(p.env_value[0], "0,1");
	assert_string_equal(p.env_name[1], "CUDA_DEVICE_ORDER");
	assert_string_equal(p.env_name[2], "NCCL_IB_HCA");
	assert_string_equal(p.env_value[2], "=mlx5_0,mlx5_1");
	assert_string_equal(p.env_value[3], "mlx5_0:1,mlx5_1:1");

	/* 8 CPUs across sockets: 4 each = 2 whole cores (CPU c and c+112
	 * are siblings) on each socket */
	assert_int_equal(gf_bind_parse_gpus("0,4", &r), 0);
	r.cpus = 8;
	assert_int_equal(gf_bind_plan(n, &r, &p, &e), 0);
	assert_true(p.spans_numa);
	gf_bitmap_format_list(&p.cpus, cl, sizeof(cl));
	assert_string_equal(cl, "0-1,56-57,112-113,168-169");
	/* an odd share: one whole core, then half of the next */
	r.cpus = 6;
	assert_int_equal(gf_bind_plan(n, &r, &p, &e), 0);
	gf_bitmap_format_list(&p.cpus, cl, sizeof(cl));
	assert_string_equal(cl, "0-1,56-57,112,168");
	gf_bitmap_format_list(&p.mems, cl, sizeof(cl));
	assert_string_equal(cl, "0-1");

	/* with UUIDs known, CUDA_VISIBLE_DEVICES names them */
	snprintf(n->gpus[0].uuid, sizeof(n->gpus[0].uuid), "GPU-aaaa");
	snprintf(n->gpus[4].uuid, sizeof(n->gpus[4].uuid), "GPU-bbbb");
	r.cpus = 0;
	assert_int_equal(gf_bind_plan(n, &r, &p, &e), 0);
	assert_string_equal(p.env_value[0], "GPU-aaaa,GPU-bbbb");
	assert_string_equal(p.env_name[1], "NCCL_IB_HCA");

	/* errors */
	assert_int_equal(gf_bind_parse_gpus("8", &r), 0);
	assert_int_equal(gf_bind_plan(n, &r, &p, &e), GF_ERANGE);
	assert_string_equal(e.msg, "no GPU 8: this node has GPU0..7");
	assert_int_equal(gf_bind_parse_gpus("1,1", &r), 0);
	assert_int_equal(gf_bind_plan(n, &r, &p, &e), GF_EINVAL);
	assert_int_equal(gf_bind_parse_gpus("0", &r), 0);
	r.cpus = 200;
	assert_int_equal(gf_bind_plan(n, &r, &p, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "112"));
	assert_int_equal(gf_bind_parse_gpus("", &r), GF_EPARSE);
	assert_int_equal(gf_bind_parse_gpus("0,", &r), GF_EPARSE);
	assert_int_equal(gf_bind_parse_gpus("x", &r), GF_EPARSE);
	assert_int_equal(gf_bind_parse_gpus("3,0-1", &r), 0);
	assert_int_equal(r.ngpus, 3);
	assert_int_equal(r.gpus[0], 3); /* the user's order is kept */
	gf_node_free(n);

	/* GPUs far from the only NICs still get them, with a reason */
	n = tmpl("pcie-l40s");
	assert_int_equal(gf_bind_parse_gpus("5", &r), 0);
	r.cpus = 0;
	assert_int_equal(gf_bind_plan(n, &r, &p, &e), 0);
	assert_int_equal(p.nnics, 2);
	bool said_sys = false;
	for (int i = 0; i < p.nreasons; i++)
		said_sys |= strstr(p.reasons[i], "(SYS)") != NULL;
	assert_true(said_sys);
	gf_node_free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalog),
		cmocka_unit_test(test_templates),
		cmocka_unit_test(test_findings),
		cmocka_unit_test(test_bind_plans),
	};
	return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
