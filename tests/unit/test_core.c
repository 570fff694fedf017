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

/*
 * GPU feature discovery's product label, from its labeler tests
 * (NVIDIA/gpu-feature-discovery internal/lm/resource_test.go,
 * TestGPUResourceLabeler "no sharing": the device's NVML name is the
 * product, with every space as '-'; "shared appends suffix": -SHARED;
 * TestMigResourceLabeler: NAME-MIG-PROFILE).  The rule on names we
 * write, then every catalog model: its gfd_product is the rule applied
 * to its NVML name (what GFD writes on such a node), and its id, NVML
 * name, GFD product and aliases each find it, and it only.
 */
static void test_catalog_gfd(void **state)
{
	(void)state;
	char out[64];
	assert_int_equal(gf_catalog_gfd_product("MOCKMODEL", out, sizeof(out)),
			 0);
	assert_string_equal(out, "MOCKMODEL");
	assert_int_equal(gf_catalog_gfd_product("NVIDIA H100 80GB HBM3", out,
						sizeof(out)),
			 0);
	assert_string_equal(out, "NVIDIA-H100-80GB-HBM3");
	assert_int_equal(gf_catalog_gfd_product("Tesla V100-SXM2-32GB", out,
						sizeof(out)),
			 0);
	assert_string_equal(out, "Tesla-V100-SXM2-32GB");
	assert_int_equal(gf_catalog_gfd_product("NVIDIA H200", out, 5),
			 GF_ETOOBIG);
	for (int i = 0; i < gf_catalog_count(); i++) {
		const struct gf_gpu_model *m = gf_catalog_at(i);
		assert_int_equal(
			gf_catalog_gfd_product(m->name, out, sizeof(out)), 0);
		assert_string_equal(m->gfd_product, out);
		assert_null(strchr(m->gfd_product, ' '));
		assert_ptr_equal(gf_catalog_lookup(m->id), m);
		assert_ptr_equal(gf_catalog_lookup(m->name), m);
		assert_ptr_equal(gf_catalog_lookup(m->gfd_product), m);
		for (int k = 0; k < GF_GPU_MAX_ALIASES && m->aliases[k]; k++) {
			assert_ptr_equal(gf_catalog_lookup(m->aliases[k]), m);
			/* an alias is no other model's id or name */
			for (int j = 0; j < gf_catalog_count(); j++) {
				const struct gf_gpu_model *o = gf_catalog_at(j);
				assert_true(o == m ||
					    (strcasecmp(o->id, m->aliases[k]) &&
					     strcasecmp(o->gfd_product,
							m->aliases[k])));
			}
		}
		assert_true(gf_catalog_same(m->gfd_product, m->id));
	}
	/* the values the issue names */
	static const char *const gfd[][2] = {
		{ "NVIDIA-H100-80GB-HBM3", "h100-sxm" },
		{ "NVIDIA-H200", "h200" },
		{ "NVIDIA-A100-SXM4-80GB", "a100-80gb" },
		{ "NVIDIA-L40S", "l40s" },
		{ "Tesla-V100-SXM2-32GB", "v100-32gb" },
	};
	for (size_t i = 0; i < sizeof(gfd) / sizeof(gfd[0]); i++)
		assert_string_equal(gf_catalog_lookup(gfd[i][0])->id,
				    gfd[i][1]);
	/* trace and MIG-catalog names: one model each */
	assert_true(gf_catalog_same("V100M32", "Tesla-V100-SXM2-32GB"));
	assert_true(gf_catalog_same("h100-80gb", "h100-sxm"));
	assert_false(gf_catalog_same("V100M32", "v100-16gb"));
	assert_false(gf_catalog_same("h100-80gb", "h100-pcie"));
	assert_false(gf_catalog_same("nope", "h100-sxm"));
	assert_true(gf_catalog_same("nope", "NOPE"));
	assert_null(gf_catalog_lookup(""));
	assert_null(gf_catalog_lookup("NVIDIA-H100")); /* no prefixes */
}

/* The H200 we recorded: its NVML name (nvidia-smi -q's product_name)
 * under GFD's rule is the catalog's h200 product, "NVIDIA-H200". */
static void test_catalog_gfd_h200(void **state)
{
	(void)state;
	char path[512], line[256], name[128] = "";
	shared_path(path, sizeof(path), "fixtures/h200/nvidia-smi-q.xml");
	FILE *f = fopen(path, "r");
	if (!f) {
		print_message("shared data absent: %s\n", path);
		skip();
	}
	while (!name[0] && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "<product_name>");
		char *q = p ? strstr(p, "</product_name>") : NULL;
		if (q)
			snprintf(name, sizeof(name), "%.*s", (int)(q - p - 14),
				 p + 14);
	}
	fclose(f);
	char out[128];
	assert_int_equal(gf_catalog_gfd_product(name, out, sizeof(out)), 0);
	assert_string_equal(out, "NVIDIA-H200");
	assert_ptr_equal(gf_catalog_lookup(out), gf_catalog_by_id("h200"));
	assert_ptr_equal(gf_catalog_by_name(name), gf_catalog_by_id("h200"));
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
		cmocka_unit_test(test_catalog_gfd),
		cmocka_unit_test(test_catalog_gfd_h200),
		cmocka_unit_test(test_templates),
		cmocka_unit_test(test_findings),
		cmocka_unit_test(test_bind_plans),
	};
	return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
