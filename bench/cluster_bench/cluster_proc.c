/*
 * cluster_proc.c - cluster_bench's clocks, child processes (the controller, a
 * real agent), temp dir and readers of /proc.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "cluster_bench/cluster_bench.h"

volatile sig_atomic_t interrupted;

int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The q-quantile of v[0..n) (sorted here); 0 when n is 0. */
double quantile(double *v, size_t n, double q)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	size_t k = (size_t)(q * (double)n);
	return v[k < n ? k : n - 1];
}

/* ---- child processes and the temp dir ------------------------------- */

char tmpdir[512];
pid_t serve_pid = -1, agent_pid = -1;

/* args[0] run with envp, stdout and stderr into log, in its own process
 * group, SIGTERM when this process dies. */
pid_t spawn(const char *const args[], char *const envp[], const char *log)
{
	int na = 0;
	while (args[na])
		na++;
	char **argv = gf_calloc((size_t)na + 1, sizeof(*argv));
	for (int i = 0; i < na; i++)
		argv[i] = gf_strdup(args[i]);
	int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pid_t self = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != self)
			_exit(127);
		setpgid(0, 0);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	close(fd);
	close(nul);
	for (int i = 0; i < na; i++)
		gf_free(argv[i]);
	gf_free(argv);
	return pid;
}

/* SIGTERM, up to secs seconds, then SIGKILL to its group. */
void stop_child(pid_t *pid, int secs)
{
	if (*pid <= 0)
		return;
	kill(*pid, SIGTERM);
	for (int i = 0; i < secs * 20; i++) {
		if (waitpid(*pid, NULL, WNOHANG) == *pid) {
			*pid = -1;
			return;
		}
		sleep_ms(50);
	}
	printf("# cluster: pid %d did not stop in %d s: SIGKILL\n", (int)*pid,
	       secs);
	kill(-*pid, SIGKILL);
	kill(*pid, SIGKILL);
	waitpid(*pid, NULL, 0);
	*pid = -1;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void cleanup(void)
{
	stop_child(&agent_pid, 20);
	stop_child(&serve_pid, 20);
	const char *keep = getenv("GPUFLEET_BENCH_KEEP");
	if (tmpdir[0] && keep && *keep && strcmp(keep, "0"))
		printf("# cluster: kept %s (GPUFLEET_BENCH_KEEP)\n", tmpdir);
	else if (tmpdir[0])
		nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	tmpdir[0] = '\0';
}

/* The file's content (NUL-terminated; caller frees), or NULL. */
char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	struct gf_buf b;
	gf_buf_init(&b, 256u << 20);
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		gf_buf_append(&b, chunk, n);
	fclose(f);
	if (len)
		*len = b.len;
	char *s = gf_strndup(gf_buf_str(&b), b.len);
	gf_buf_release(&b);
	return s;
}

void print_tail(const char *path)
{
	size_t len = 0;
	char *s = slurp(path, &len);
	if (!s)
		return;
	const char *p = len > 1500 ? s + len - 1500 : s;
	for (const char *l = p; *l;) {
		const char *nl = strchr(l, '\n');
		int w = nl ? (int)(nl - l) : (int)strlen(l);
		printf("#   %.*s\n", w, l);
		l += w + (nl ? 1 : 0);
	}
	gf_free(s);
}

/* Lines of the file holding needle. */
int count_lines(const char *path, const char *needle)
{
	char *s = slurp(path, NULL);
	int n = 0;
	for (const char *p = s; p && (p = strstr(p, needle)); p++)
		n++;
	gf_free(s);
	return n;
}

double proc_cpu_s(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	char *s = slurp(path, NULL);
	const char *p = s ? strrchr(s, ')') : NULL;
	unsigned long long ut = 0, st = 0;
	/* after "(comm)": state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime */
	if (p)
		sscanf(p + 2,
		       "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu "
		       "%llu",
		       &ut, &st);
	gf_free(s);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* A /proc/PID/status field in kB ("VmRSS"), -1 when absent. */
long proc_status_kb(pid_t pid, const char *field)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	char *s = slurp(path, NULL);
	const char *p = s ? strstr(s, field) : NULL;
	long kb = -1;
	if (p)
		sscanf(p + strlen(field) + 1, "%ld", &kb);
	gf_free(s);
	return kb;
}

/* Open fds of a process (its sockets, mostly), -1 unknown. */
int proc_fds(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The machine's busy and total jiffies (/proc/stat). */
void machine_jiffies(unsigned long long *busy, unsigned long long *all)
{
	char *s = slurp("/proc/stat", NULL);
	unsigned long long v[8] = { 0 };
	if (s)
		sscanf(s, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		       &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	gf_free(s);
	*all = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	*busy = *all - v[3] - v[4];
}

double self_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* GET path into a parsed document (caller frees), or NULL. */
