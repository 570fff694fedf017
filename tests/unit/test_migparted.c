/*
 * test_migparted.c - the mig-parted reader against the cases of NVIDIA's
 * own tests (issue 22), each written here from upstream's documented
 * behaviour and named next to it: mig-parted's api/spec/v1/spec_test.go
 * (TestSpec, TestMigConfigSpec), api/spec/v1/helpers_test.go
 * (TestMigConfigSpecMatchesDeviceFilter), pkg/types/device_test.go
 * (TestNewDeviceIDFromString, TestDeviceIDMatches) and go-nvlib's
 * pkg/nvlib/device/mig_profile_test.go (TestParseMigProfile, the
 * validFormat column); multi-document manifests as NVIDIA's
 * deployments/container/nvidia-mig-manager-example*.yaml are made.
 */
#include "helpers.h"
#include "mig/migparted.h"

static char dir[64];

/* Read the YAML text through gf_mp_read (a file in dir): its result,
 * f filled on success (the caller releases), e->msg on error. */
static int read_text(const char *text, struct gf_mp_file *f, struct gf_err *e)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/cfg.yaml", dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	gf_err_clear(e);
	return gf_mp_read(path, f, e);
}

/* 0 when the text reads; else prints why and returns the error. */
static int reads(const char *text)
{
	struct gf_mp_file f;
	struct gf_err e;
	int rc = read_text(text, &f, &e);
	if (rc == 0)
		gf_mp_release(&f);
	return rc;
}

/* One entry of config "c" with these lines in its map. */
static int entry_reads(const char *fields, struct gf_mp_file *f,
		       struct gf_err *e)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "version: v1\nmig-configs:\n  c:\n    - %s\n", fields);
	return read_text(text, f, e);
}

/* mig-parted TestSpec: the file's top level. */
static void test_spec(void **state)
{
	(void)state;
	static const char disabled[] = "mig-configs:\n  all-disabled:\n"
				       "    - devices: all\n"
				       "      mig-enabled: false\n";
	char text[512];
	assert_int_equal(reads(""), 0); /* TestSpec "Empty" */
	assert_int_equal(reads("---\n"), 0);
	snprintf(text, sizeof(text), "version: v1\n%s", disabled);
	assert_int_equal(reads(text), 0);	     /* "Well formed" */
	assert_int_equal(reads("version: v1\n"), 0); /* "Only version field" */
	snprintf(text, sizeof(text), "version: v2\n%s", disabled);
	assert_int_not_equal(reads(text),
			     0); /* "Well formed - wrong version" */
	assert_int_not_equal(reads("version: v2\n"), 0); /* "Only version
							    field - wrong
							    versiomn" */
	assert_int_not_equal(reads(disabled), 0); /* "Missing version field" */
	snprintf(text, sizeof(text), "bogus: field\nversion: v1\n%s", disabled);
	assert_int_not_equal(reads(text), 0); /* "Erroneous field" */
	assert_int_not_equal(reads("version: v1\nmig-configs: {}\n"),
			     0); /* "Empty 'mig-configs'" */
	/* what an empty file and `version: v1` alone hold: no configs */
	struct gf_mp_file f;
	struct gf_err e;
	assert_int_equal(read_text("version: v1\n", &f, &e), 0);
	assert_int_equal(f.n, 0);
	struct gf_buf out;
	gf_buf_init(&out, 1 << 12);
	int warnings;
	assert_int_equal(gf_mp_validate(&f, &out, &warnings), 0);
	assert_int_equal(warnings, 0);
	gf_buf_release(&out);
	gf_mp_release(&f);
}

/* mig-parted TestMigConfigSpec: one entry, device-filter among them. */
static void test_config_spec(void **state)
{
	(void)state;
	static const char *const ok[] = {
		/* "Well formed" */
		"devices: all\n      mig-enabled: true\n"
		"      mig-devices: {\"1g.5gb\": 2}",
		/* "Well formed with filter" */
		"device-filter: MODEL\n      devices: all\n"
		"      mig-enabled: true\n      mig-devices: {\"1g.5gb\": 2}",
		/* "Well formed with multi-filter" */
		"device-filter: [MODEL1, MODEL2]\n      devices: all\n"
		"      mig-enabled: true\n      mig-devices: {\"1g.5gb\": 2}",
		/* "Missing 'mig-devices', enabled: false" */
		"devices: all\n      mig-enabled: false",
		/* "'devices' []int" */
		"devices: [0, 1, 2, 3]\n      mig-enabled: false",
	};
	static const char *const bad[] = {
		/* "Missing 'devices'" */
		"mig-enabled: true\n      mig-devices: {\"1g.5gb\": 2}",
		/* "Missing 'mig-enabled'" */
		"devices: all\n      mig-devices: {\"1g.5gb\": 2}",
		/* "Missing 'mig-devices', enabled: true" */
		"devices: all\n      mig-enabled: true",
		/* "'mig-devices' formatted incorrectly" */
		"devices: all\n      mig-enabled: true\n"
		"      mig-devices: {bogus: 2}",
		/* "Erroneous field" */
		"bogus: field\n      devices: all\n      mig-enabled: false",
		/* "'devices' string != all" */
		"devices: bogus\n      mig-enabled: false",
		/* "'devices' not string for []int" */
		"devices: {}\n      mig-enabled: false",
		/* a map is no filter (spec.go: a string or a list) */
		"device-filter: {a: b}\n      devices: all\n"
		"      mig-enabled: false",
	};
	struct gf_mp_file f;
	struct gf_err e;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int rc = entry_reads(ok[i], &f, &e);
		if (rc)
			print_message("ok[%zu]: %s\n", i, e.msg);
		assert_int_equal(rc, 0);
		gf_mp_release(&f);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(entry_reads(bad[i], &f, &e), GF_EPARSE);
	/* the model names are kept, as written, and are no device ids */
	assert_int_equal(entry_reads(ok[2], &f, &e), 0);
	const struct gf_mp_entry *en = &f.configs[0].entries[0];
	assert_int_equal(en->nfilters, 2);
	assert_string_equal(en->filters[1].text, "MODEL2");
	assert_false(en->filters[0].is_id);
	gf_mp_release(&f);
}

/* The filter the text makes (one string). */
static struct gf_mp_filter filter_of(const char *s)
{
	char fields[256];
	snprintf(fields, sizeof(fields),
		 "device-filter: \"%s\"\n      devices: all\n"
		 "      mig-enabled: false",
		 s);
	struct gf_mp_file f;
	struct gf_err e;
	assert_int_equal(entry_reads(fields, &f, &e), 0);
	assert_int_equal(f.configs[0].entries[0].nfilters, 1);
	struct gf_mp_filter fl = f.configs[0].entries[0].filters[0];
	gf_mp_release(&f);
	return fl;
}

/* mig-parted TestNewDeviceIDFromString and TestDeviceIDMatches
 * (pkg/types/device_test.go); hardware 0x25B610DE, subsystem 0x14A910DE
 * (an A16) or 0x157E10DE (an A2). */
static void test_device_ids(void **state)
{
	(void)state;
	/* "primary only" */
	struct gf_mp_filter p = filter_of("0x25B610DE");
	assert_true(p.is_id);
	assert_false(p.has_sub);
	assert_int_equal(p.device, 0x25B6);
	assert_int_equal(p.vendor, 0x10DE);
	/* "with subsystem" */
	struct gf_mp_filter s = filter_of("0x25B610DE:0x14A910DE");
	assert_true(s.is_id && s.has_sub);
	assert_int_equal(s.sub_device, 0x14A9);
	assert_int_equal(s.sub_vendor, 0x10DE);
	/* "invalid primary", "invalid subsystem", "too many separators":
	 * read (mig-parted's unmarshal keeps any string), no device id */
	assert_false(filter_of("not-a-device-id").is_id);
	assert_false(filter_of("0x25B610DE:not-a-subsystem").is_id);
	assert_false(filter_of("0x25B610DE:0x14A910DE:extra").is_id);
	/* Go's ParseUint(s, 0, 32): base prefixes, '_' between digits, no
	 * sign, 32 bits at most */
	assert_int_equal(filter_of("0X25b6_10de").device, 0x25B6);
	assert_int_equal(filter_of("632688862").device, 0x25B6);
	assert_false(filter_of("0x25B610DE_").is_id);
	assert_false(filter_of("+0x25B610DE").is_id);
	assert_false(filter_of("0x125B610DE").is_id);
	assert_false(filter_of("0x").is_id);
	/* TestDeviceIDMatches */
	uint32_t a16 = 0x14A910DE, a2 = 0x157E10DE;
	/* "primary only filter matches same primary id" */
	assert_true(gf_mp_filter_matches(&p, 0x25B6, 0x10DE, a16));
	/* "subsystem filter matches exact hardware" */
	assert_true(gf_mp_filter_matches(&s, 0x25B6, 0x10DE, a16));
	/* "subsystem filter rejects sibling subsystem" */
	assert_false(gf_mp_filter_matches(&s, 0x25B6, 0x10DE, a2));
	/* "subsystem filter does not match hardware with unknown subsystem" */
	assert_false(gf_mp_filter_matches(&s, 0x25B6, 0x10DE, 0));
	/* "zero subsystem filter matches hardware with unknown subsystem" */
	struct gf_mp_filter z = filter_of("0x25B610DE:0x0");
	assert_true(gf_mp_filter_matches(&z, 0x25B6, 0x10DE, 0));
	/* "different primary id does not match" */
	struct gf_mp_filter other = filter_of("0x1E3010DE");
	assert_false(gf_mp_filter_matches(&other, 0x25B6, 0x10DE, a16));
}

/* mig-parted TestMigConfigSpecMatchesDeviceFilter (api/spec/v1/
 * helpers_test.go): an H100, 0x233010DE with subsystem 0x16C010DE. */
static void test_filter_matches(void **state)
{
	(void)state;
	static const struct {
		const char *filter; /* a YAML value */
		bool want;
	} cases[] = {
		{ "\"\"", true },	    /* "empty filter matches all
					       devices" */
		{ "\"0x233010DE\"", true }, /* "primary-only filter ..." */
		{ "\"0x233010DE:0x16C010DE\"", true },	/* "matching subsystem
							   filter ..." */
		{ "\"0x233010DE:0x16C110DE\"", false }, /* "sibling subsystem
							   filter ..." */
		{ "[\"0x233010DE:0x16C110DE\", \"0x233010DE:0x16C010DE\"]",
		  true }, /* "multiple filters stop at a matching ..." */
		{ "\"0x233010DE:0x16C010DE:extra\"", false }, /* "malformed
								 filters ..." */
		{ "\"H100-SXM5-80GB\"", false }, /* a model name: no match */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char fields[256];
		snprintf(fields, sizeof(fields),
			 "device-filter: %s\n      devices: all\n"
			 "      mig-enabled: false",
			 cases[i].filter);
		struct gf_mp_file f;
		struct gf_err e;
		assert_int_equal(entry_reads(fields, &f, &e), 0);
		const struct gf_mp_entry *en = &f.configs[0].entries[0];
		bool match = en->nfilters == 0;
		for (int k = 0; k < en->nfilters; k++)
			match |= gf_mp_filter_matches(&en->filters[k], 0x2330,
						      0x10DE, 0x16C010DE);
		if (match != cases[i].want)
			print_message("case %zu: %s\n", i, cases[i].filter);
		assert_true(match == cases[i].want);
		gf_mp_release(&f);
	}
}

/* go-nvlib TestParseMigProfile, its validFormat column: the names
 * mig-parted's mig-devices accepts (a valid format; whether a GPU has
 * the profile is gf_mp_validate's question). */
static void test_profile_format(void **state)
{
	(void)state;
	static const char *const ok[] = {
		"1g.5gb",
		"1c.1g.5gb",
		"1g.5gb+me",
		"1c.1g.5gb+me",
		"1c.1g.5gb-me",
		"1g.5gb+me.all",
		"1c.1g.5gb+me.all",
		"1g.5gb+gfx",
		"1c.1g.5gb+gfx",
		"0g.0gb",
		"0c.0g.0gb",
		"10000g.500000gb",
		"1g.5gb+me,you,them",
		"1c.1g.5gb+me,you,them",
	};
	static const char *const bad[] = {
		" 1c.1g.5gb",	   "1 c.1g.5gb",      "1c .1g.5gb",
		"1c. 1g.5gb",	   "1c.1 g.5gb",      "1c.1g .5gb",
		"1c.1g. 5gb",	   "1c.1g.5 gb",      "1c.1g.5g b",
		"1c.1g.5gb ",	   "1c . 1g . 5gb",   "1c.f1g.5gb",
		"1r.1g.5gb",	   "1g.5gbk",	      "1g.5",
		"g.5gb",	   "1g.gb",	      "1g.5gb+me,me",
		"1g.5gb+",	   "1g.5gb +",	      "1g.5gb+ ",
		"1g.5gb+ ,",	   "1g.5gb+,,",	      "1g.5gb+me,",
		"1g.5gb+me,,",	   "1g.5gb+me, ",     "1g.5gb+2me",
		"1g.5gb*me",	   "1c.1g.5gb*me",    "1g.5gb*me,you,them",
		"bogus",	   "1c.1g.5gb+.all",  "1c.1g.5gb+all.",
		"1c.1g.5gb+me-me", "1c.1g.5gb-me+me", "1c.1g.5gb+",
	};
	char fields[256];
	struct gf_mp_file f;
	struct gf_err e;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(fields, sizeof(fields),
			 "devices: all\n      mig-enabled: true\n"
			 "      mig-devices: {\"%s\": 1}",
			 ok[i]);
		int rc = entry_reads(fields, &f, &e);
		if (rc)
			print_message("%s: %s\n", ok[i], e.msg);
		assert_int_equal(rc, 0);
		gf_mp_release(&f);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(fields, sizeof(fields),
			 "devices: all\n      mig-enabled: true\n"
			 "      mig-devices: {\"%s\": 1}",
			 bad[i]);
		int rc = entry_reads(fields, &f, &e);
		if (rc != GF_EPARSE || !strstr(e.msg, "malformed MIG profile"))
			print_message("%s: rc %d %s\n", bad[i], rc, e.msg);
		assert_int_equal(rc, GF_EPARSE);
		assert_non_null(strstr(e.msg, "malformed MIG profile name"));
	}
	/* the same suffix with and without "1c.": the same refusal */
	assert_int_equal(entry_reads("devices: all\n      mig-enabled: true\n"
				     "      mig-devices: {\"1g.5gb+.all\": 1}",
				     &f, &e),
			 GF_EPARSE);
	assert_non_null(strstr(e.msg, ":6: 'mig-devices': '1g.5gb+.all' is a "
				      "malformed MIG profile name: attribute "
				      "begins/ends with a dot"));
}

/* A manifest of several documents, as NVIDIA's
 * nvidia-mig-manager-example.yaml: a DaemonSet, a ServiceAccount, then
 * the ConfigMap whose data holds config.yaml. */
static void test_manifest(void **state)
{
	(void)state;
	static const char manifest[] =
		"---\n"
		"apiVersion: apps/v1\n"
		"kind: DaemonSet\n"
		"metadata:\n"
		"  name: nvidia-mig-manager\n"
		"---\n"
		"apiVersion: v1\n"
		"kind: ServiceAccount\n"
		"metadata:\n"
		"  name: nvidia-mig-manager-service-account\n"
		"---\n"
		"apiVersion: v1\n"
		"kind: ConfigMap\n"
		"metadata:\n"
		"  name: mig-parted-config\n"
		"data:\n"
		"  config.yaml: |\n"
		"    version: v1\n"
		"    mig-configs:\n"
		"      all-1g.10gb:\n"
		"        - device-filter: \"0x233010DE\"\n"
		"          devices: all\n"
		"          mig-enabled: true\n"
		"          mig-devices:\n"
		"            \"1g.10gb\": 7\n";
	struct gf_mp_file f;
	struct gf_err e;
	assert_int_equal(read_text(manifest, &f, &e), 0);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.configs[0].name, "all-1g.10gb");
	assert_int_equal(f.configs[0].line, 20); /* the file's own line */
	gf_mp_release(&f);
	/* no document to read: named; two: the second named */
	assert_int_equal(
		read_text("kind: DaemonSet\n---\nkind: Role\n", &f, &e),
		GF_EPARSE);
	assert_non_null(strstr(e.msg, "none of its 2 YAML documents"));
	assert_int_equal(read_text("version: v1\n---\nversion: v1\n", &f, &e),
			 GF_EPARSE);
	assert_non_null(strstr(e.msg, "cfg.yaml:3: a second mig-parted "
				      "config (the first is at line 1)"));
	/* an error in the embedded config: its line in the file */
	char bad[sizeof(manifest) + 8];
	const char *last = strstr(manifest, "\"1g.10gb\": 7");
	snprintf(bad, sizeof(bad), "%.*s\"1g.10gb+\": 7\n",
		 (int)(last - manifest), manifest);
	assert_int_equal(read_text(bad, &f, &e), GF_EPARSE);
	assert_non_null(
		strstr(e.msg, ":25: 'mig-devices': '1g.10gb+' is a malformed"));
}

/* NVIDIA's files in $GPUFLEET_SHARED read and validate without error. */
static void test_shared_files(void **state)
{
	(void)state;
	char path[512];
	shared_path(path, sizeof(path),
		    "reference/mig-parted/gpu-operator-default-mig-parted-"
		    "config.configmap.yaml");
	if (access(path, R_OK) != 0) {
		print_message("shared data absent: %s\n", path);
		skip();
	}
	struct gf_mp_file f;
	struct gf_err e;
	assert_int_equal(gf_mp_read(path, &f, &e), 0);
	struct gf_buf out;
	gf_buf_init(&out, 1 << 20);
	int warnings;
	assert_int_equal(gf_mp_validate(&f, &out, &warnings), 0);
	assert_null(strstr(gf_buf_str(&out), "selects no GPU"));
	gf_buf_release(&out);
	gf_mp_release(&f);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gf-test-migparted-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec),
		cmocka_unit_test(test_config_spec),
		cmocka_unit_test(test_device_ids),
		cmocka_unit_test(test_filter_matches),
		cmocka_unit_test(test_profile_format),
		cmocka_unit_test(test_manifest),
		cmocka_unit_test(test_shared_files),
	};
	int rc = cmocka_run_group_tests_name("migparted", tests, NULL, NULL);
	char path[128];
	snprintf(path, sizeof(path), "%s/cfg.yaml", dir);
	unlink(path);
	rmdir(dir);
	return rc;
}
