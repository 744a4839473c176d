// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kvm_vm [--fake] [--no-wait] [-name VALUE] NCPU
 *
 * A stand-in for a QEMU process, for the tests of KVM's exact sync
 * (Documentation/design.md, Exact sync on KVM). It creates a tiny KVM VM
 * with NCPU vCPUs (KVM_CREATE_VM, KVM_CREATE_VCPU), each vCPU driven by a
 * thread named "CPU N/KVM" as QEMU names them with debug-threads=on, and
 * keeps it alive until stdin reaches its end or SIGTERM/SIGINT arrives.
 * Its program name contains "kvm" and -name is taken (and ignored), so
 * host/guest/qemu.c's scan finds it as it finds QEMU.
 *
 * Each vCPU runs four real-mode instructions at 0x1000:
 *
 *     start: rdtsc          ; edx:eax = the guest's TSC
 *            out 0x10, al   ; exit to us: we read edx:eax with KVM_GET_REGS
 *            hlt            ; exit to us (no in-kernel irqchip)
 *            jmp start
 *
 * so one "run" is two KVM_RUNs, and the guest's TSC is bracketed by the
 * host's rdtsc before the first entry and after the I/O exit. Output
 * (stdout, line-buffered):
 *
 *     tsc VCPU HOST_BEFORE GUEST HOST_AFTER   one per vCPU and run
 *     ready PID VMFD                          once, after the first run,
 *                                             when debugfs shows the VM
 *     done                                    after each later run
 *
 * Lines on stdin ask for more:
 *
 *     tsc              another run of every vCPU
 *     wrmsr CPU DELTA  a run in which vCPU CPU's guest first writes its
 *                      TSC (wrmsr IA32_TSC) with the host's TSC before
 *                      the entry plus DELTA (decimal, may be negative),
 *                      then reads it back: a write KVM traces as
 *                      kvm:kvm_write_tsc_offset from the vCPU's thread;
 *                      the other vCPUs run as for "tsc". Prints
 *                      "wrmsr VCPU VALUE HOST_BEFORE GUEST HOST_AFTER"
 *                      (GUEST: its rdtsc right after the write)
 *     offset CPU OFF   KVM_SET_DEVICE_ATTR KVM_VCPU_TSC_OFFSET = OFF on
 *                      vCPU CPU (QEMU's way on a migration's
 *                      destination), from the main thread; prints
 *                      "offset VCPU OFF HOST_BEFORE HOST_AFTER", or
 *                      "offset VCPU OFF error ERRNO-TEXT"
 *
 * each followed by "done". The VM's debugfs directory is
 * /sys/kernel/debug/kvm/PID-VMFD (KVM names it after the creating task
 * and the VM's fd); "ready" waits for it when debugfs is mounted and
 * readable (else it says so on stderr and goes on), unless --no-wait (a
 * test that lays out its own tree over debugfs's kvm directory).
 *
 * --fake creates no VM (for a machine without /dev/kvm, or a test that
 * lays out its own debugfs tree): the threads are named all the same,
 * "ready PID -1" is printed and every request prints only "done".
 *
 * Exit status: 0 at the end of stdin or on a signal, 1 on an error, 2 on
 * bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <x86intrin.h>

#define KVM_VM_MAX_VCPUS 64
#define KVM_VM_MEM	 0x10000
#define KVM_VM_CODE	 0x1000
#define KVM_VM_PORT	 0x10
#define KVM_VM_WRMSR	 0x2000
#define MSR_IA32_TSC	 0x10

/* rdtsc; out 0x10, al; hlt; jmp start */
static const uint8_t guest_code[] = { 0x0f, 0x31, 0xe6, KVM_VM_PORT, 0xf4, 0xeb, 0xf9 };
/* at KVM_VM_WRMSR: mov ecx, MSR_IA32_TSC; mov edx, HI; mov eax, LO;
 * wrmsr; rdtsc; out 0x10, al; hlt (HI at +8, LO at +14) */
static const uint8_t wrmsr_code[] = {
	0x66, 0xb9, MSR_IA32_TSC, 0, 0, 0, 0x66, 0xba, 0, 0, 0, 0, 0x66, 0xb8, 0, 0, 0, 0,
	0x0f, 0x30, 0x0f, 0x31, 0xe6, KVM_VM_PORT, 0xf4,
};

struct vm;

struct vcpu {
	struct vm *vm;
	int id;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	/* the last run's result */
	uint64_t host_before, guest, host_after;
	int err;		/* 0 or -errno of the last run */
	unsigned int done_gen;	/* the run generation it has finished */
	bool wrmsr;		/* the next run writes the TSC first */
	int64_t delta;		/* ... as the host's TSC plus this */
	uint64_t written;	/* what it wrote */
};

struct vm {
	bool fake;
	int kvm_fd, vm_fd;
	size_t run_size;
	uint8_t *mem;
	int ncpu;
	struct vcpu cpu[KVM_VM_MAX_VCPUS];
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int gen;	/* runs asked for */
	bool quit;
	bool no_wait;		/* --no-wait */
};

/* Points vCPU @c at @rip. Returns 0 or -errno. */
static int vcpu_set_rip(struct vcpu *c, uint64_t rip)
{
	struct kvm_regs regs;

	if (ioctl(c->fd, KVM_GET_REGS, &regs) < 0)
		return -errno;
	regs.rip = rip;
	return ioctl(c->fd, KVM_SET_REGS, &regs) < 0 ? -errno : 0;
}

/* Puts the TSC value @v into the wrmsr code and @c at it. */
static int vcpu_arm_wrmsr(struct vcpu *c, uint64_t v)
{
	uint32_t hi = (uint32_t)(v >> 32), lo = (uint32_t)v;

	memcpy(c->vm->mem + KVM_VM_WRMSR + 8, &hi, sizeof(hi));
	memcpy(c->vm->mem + KVM_VM_WRMSR + 14, &lo, sizeof(lo));
	c->written = v;
	return vcpu_set_rip(c, KVM_VM_WRMSR);
}

/* One run of @c: enter until the I/O exit (the guest's rdtsc), then until
 * the hlt exit; with c->wrmsr the guest writes its TSC first. Returns 0
 * or -errno (-EIO for an unexpected exit). */
static int vcpu_run_once(struct vcpu *c)
{
	struct kvm_regs regs;
	int ret;

	c->host_before = __rdtsc();
	if (c->wrmsr && (ret = vcpu_arm_wrmsr(c, c->host_before + (uint64_t)c->delta)))
		return ret;
	if (ioctl(c->fd, KVM_RUN, 0) < 0)
		return -errno;
	c->host_after = __rdtsc();
	if (c->run->exit_reason != KVM_EXIT_IO || c->run->io.port != KVM_VM_PORT) {
		fprintf(stderr, "kvm_vm: vCPU %d: exit %u where the I/O exit was due\n",
			c->id, c->run->exit_reason);
		return -EIO;
	}
	if (ioctl(c->fd, KVM_GET_REGS, &regs) < 0)
		return -errno;
	c->guest = (regs.rdx & 0xffffffffULL) << 32 | (regs.rax & 0xffffffffULL);
	if (ioctl(c->fd, KVM_RUN, 0) < 0)
		return -errno;
	if (c->run->exit_reason != KVM_EXIT_HLT) {
		fprintf(stderr, "kvm_vm: vCPU %d: exit %u where hlt was due\n",
			c->id, c->run->exit_reason);
		return -EIO;
	}
	/* after the wrmsr program's hlt: back to the rdtsc loop */
	return c->wrmsr ? vcpu_set_rip(c, KVM_VM_CODE) : 0;
}

/* The vCPU thread: named as QEMU's, it runs its vCPU once per generation. */
static void *vcpu_thread(void *arg)
{
	struct vcpu *c = arg;
	struct vm *vm = c->vm;
	char name[16];

	snprintf(name, sizeof(name), "CPU %d/KVM", c->id);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	pthread_mutex_lock(&vm->lock);
	for (;;) {
		while (!vm->quit && c->done_gen == vm->gen)
			pthread_cond_wait(&vm->cond, &vm->lock);
		if (vm->quit)
			break;
		pthread_mutex_unlock(&vm->lock);
		c->err = vm->fake ? 0 : vcpu_run_once(c);
		pthread_mutex_lock(&vm->lock);
		c->done_gen++;
		pthread_cond_broadcast(&vm->cond);
	}
	pthread_mutex_unlock(&vm->lock);
	return NULL;
}

/* Creates vCPU @id: its fd, its kvm_run page, real mode at KVM_VM_CODE. */
static int vcpu_create(struct vm *vm, int id)
{
	struct vcpu *c = &vm->cpu[id];
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	c->vm = vm;
	c->id = id;
	c->fd = -1;
	if (vm->fake)
		return 0;
	c->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, id);
	if (c->fd < 0)
		return -errno;
	c->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (c->run == MAP_FAILED) {
		c->run = NULL;
		return -errno;
	}
	if (ioctl(c->fd, KVM_GET_SREGS, &sregs) < 0)
		return -errno;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(c->fd, KVM_SET_SREGS, &sregs) < 0)
		return -errno;
	memset(&regs, 0, sizeof(regs));
	regs.rip = KVM_VM_CODE;
	regs.rflags = 0x2;
	if (ioctl(c->fd, KVM_SET_REGS, &regs) < 0)
		return -errno;
	return 0;
}

/* Opens /dev/kvm, creates the VM and its guest memory. Returns 0 or -errno. */
static int vm_create(struct vm *vm)
{
	struct kvm_userspace_memory_region region;
	int n;

	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0)
		return -errno;
	if (ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0) != KVM_API_VERSION)
		return -ENOTSUP;
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0)
		return -errno;
	n = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (n <= 0)
		return n < 0 ? -errno : -EINVAL;
	vm->run_size = (size_t)n;
	vm->mem = mmap(NULL, KVM_VM_MEM, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->mem == MAP_FAILED) {
		vm->mem = NULL;
		return -errno;
	}
	memcpy(vm->mem + KVM_VM_CODE, guest_code, sizeof(guest_code));
	memcpy(vm->mem + KVM_VM_WRMSR, wrmsr_code, sizeof(wrmsr_code));
	region = (struct kvm_userspace_memory_region){
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = KVM_VM_MEM,
		.userspace_addr = (uintptr_t)vm->mem,
	};
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return -errno;
	return 0;
}

/* Asks every vCPU thread for one run and waits for them all; prints each
 * vCPU's "tsc" line. Returns 0 or the first vCPU's error. */
static int vm_run_all(struct vm *vm)
{
	int err = 0;

	pthread_mutex_lock(&vm->lock);
	vm->gen++;
	pthread_cond_broadcast(&vm->cond);
	for (int i = 0; i < vm->ncpu; i++)
		while (vm->cpu[i].done_gen != vm->gen)
			pthread_cond_wait(&vm->cond, &vm->lock);
	pthread_mutex_unlock(&vm->lock);
	for (int i = 0; i < vm->ncpu && !vm->fake; i++) {
		struct vcpu *c = &vm->cpu[i];

		if (c->err) {
			fprintf(stderr, "kvm_vm: vCPU %d: run: %s\n", i, strerror(-c->err));
			err = err ? err : c->err;
			continue;
		}
		if (c->wrmsr)
			printf("wrmsr %d %llu %llu %llu %llu\n", i, (unsigned long long)c->written,
			       (unsigned long long)c->host_before, (unsigned long long)c->guest,
			       (unsigned long long)c->host_after);
		else
			printf("tsc %d %llu %llu %llu\n", i, (unsigned long long)c->host_before,
			       (unsigned long long)c->guest, (unsigned long long)c->host_after);
		c->wrmsr = false;
	}
	return err;
}

/* "offset CPU OFF": KVM_VCPU_TSC_OFFSET set from this thread. */
static void vm_set_offset(struct vm *vm, int cpu, int64_t off)
{
	struct kvm_device_attr a = { .group = KVM_VCPU_TSC_CTRL, .attr = KVM_VCPU_TSC_OFFSET,
				     .addr = (uintptr_t)&off };
	uint64_t before = __rdtsc();

	if (ioctl(vm->cpu[cpu].fd, KVM_SET_DEVICE_ATTR, &a) < 0)
		printf("offset %d %lld error %s\n", cpu, (long long)off, strerror(errno));
	else
		printf("offset %d %lld %llu %llu\n", cpu, (long long)off,
		       (unsigned long long)before, (unsigned long long)__rdtsc());
}

/* Carries out one request line of stdin (see the top); 0 or -errno. */
static int request(struct vm *vm, const char *line)
{
	long long v;
	int cpu, n = -1, err = 0;

	if (!strcmp(line, "tsc")) {
		err = vm_run_all(vm);
	} else if (sscanf(line, "wrmsr %d %lld%n", &cpu, &v, &n) == 2 && !line[n]) {
		if (cpu < 0 || cpu >= vm->ncpu)
			return -EINVAL;
		vm->cpu[cpu].wrmsr = !vm->fake;
		vm->cpu[cpu].delta = v;
		err = vm_run_all(vm);
	} else if (sscanf(line, "offset %d %lld%n", &cpu, &v, &n) == 2 && !line[n]) {
		if (cpu < 0 || cpu >= vm->ncpu)
			return -EINVAL;
		if (!vm->fake)
			vm_set_offset(vm, cpu, v);
	} else {
		fprintf(stderr, "kvm_vm: unknown request '%s'\n", line);
		return 0;
	}
	if (!err)
		printf("done\n");
	return err;
}

/* Waits (up to 5 s) for the VM's debugfs directory; 0 if it is there or
 * debugfs cannot be read here (said on stderr), -ETIMEDOUT otherwise. */
static int wait_debugfs(const struct vm *vm)
{
	char path[128];
	struct stat st;

	if (vm->fake || vm->no_wait)
		return 0;
	if (stat("/sys/kernel/debug/kvm", &st) < 0) {
		fprintf(stderr, "kvm_vm: /sys/kernel/debug/kvm: %s (not waiting for it)\n",
			strerror(errno));
		return 0;
	}
	snprintf(path, sizeof(path), "/sys/kernel/debug/kvm/%d-%d/vcpu%d",
		 (int)getpid(), vm->vm_fd, vm->ncpu - 1);
	for (int i = 0; i < 500; i++) {
		if (stat(path, &st) == 0)
			return 0;
		usleep(10000);
	}
	fprintf(stderr, "kvm_vm: %s did not appear within 5 s\n", path);
	return -ETIMEDOUT;
}

/* Reads stdin and the signals until the end of stdin or a signal; runs
 * the vCPUs for every "tsc" line. Returns 0 or -errno. */
static int serve(struct vm *vm, int sfd)
{
	char line[64];
	size_t len = 0;

	for (;;) {
		struct pollfd p[2] = { { 0, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		ssize_t n;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[1].revents)
			return 0;
		if (!p[0].revents)
			continue;
		n = read(0, line + len, sizeof(line) - 1 - len);
		if (n <= 0)
			return 0;
		len += (size_t)n;
		line[len] = '\0';
		for (char *nl; (nl = strchr(line, '\n'));) {
			*nl = '\0';
			int err = request(vm, line);

			if (err)
				return err;
			len -= (size_t)(nl + 1 - line);
			memmove(line, nl + 1, len + 1);
		}
		if (len == sizeof(line) - 1)
			len = 0;	/* an overlong line: dropped */
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: kvm_vm [--fake] [--no-wait] [-name VALUE] NCPU\n");
}

int main(int argc, char **argv)
{
	static struct vm vm = { .kvm_fd = -1, .vm_fd = -1 };
	int started = 0, err = 0, sfd, i;
	const char *ncpu_arg = NULL;
	sigset_t set;
	char *e;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--fake"))
			vm.fake = true;
		else if (!strcmp(argv[i], "--no-wait"))
			vm.no_wait = true;
		else if (!strcmp(argv[i], "-name") && i + 1 < argc)
			i++;
		else if (!ncpu_arg)
			ncpu_arg = argv[i];
		else
			break;
	}
	if (!ncpu_arg || i < argc) {
		usage();
		return 2;
	}
	vm.ncpu = (int)strtol(ncpu_arg, &e, 10);
	if (*e || vm.ncpu < 1 || vm.ncpu > KVM_VM_MAX_VCPUS) {
		fprintf(stderr, "kvm_vm: NCPU must be 1..%d, not '%s'\n", KVM_VM_MAX_VCPUS, ncpu_arg);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* the signals are read from a signalfd, so every thread blocks them */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		perror("kvm_vm: signalfd");
		return 1;
	}
	pthread_mutex_init(&vm.lock, NULL);
	pthread_cond_init(&vm.cond, NULL);
	for (i = 0; i < vm.ncpu; i++)
		vm.cpu[i].fd = -1;
	if (!vm.fake && (err = vm_create(&vm))) {
		fprintf(stderr, "kvm_vm: cannot create a VM: %s\n", strerror(-err));
		goto out;
	}
	for (i = 0; i < vm.ncpu; i++) {
		err = vcpu_create(&vm, i);
		if (err) {
			fprintf(stderr, "kvm_vm: vCPU %d: %s\n", i, strerror(-err));
			goto out;
		}
		err = -pthread_create(&vm.cpu[i].thread, NULL, vcpu_thread, &vm.cpu[i]);
		if (err) {
			fprintf(stderr, "kvm_vm: vCPU %d thread: %s\n", i, strerror(-err));
			goto out;
		}
		started++;
	}
	err = vm_run_all(&vm);
	if (!err)
		err = wait_debugfs(&vm);
	if (err)
		goto out;
	printf("ready %d %d\n", (int)getpid(), vm.fake ? -1 : vm.vm_fd);
	err = serve(&vm, sfd);
out:
	pthread_mutex_lock(&vm.lock);
	vm.quit = true;
	pthread_cond_broadcast(&vm.cond);
	pthread_mutex_unlock(&vm.lock);
	for (i = 0; i < started; i++)
		pthread_join(vm.cpu[i].thread, NULL);
	for (i = 0; i < vm.ncpu; i++) {
		if (vm.cpu[i].run)
			munmap(vm.cpu[i].run, vm.run_size);
		if (vm.cpu[i].fd >= 0)
			close(vm.cpu[i].fd);
	}
	if (vm.mem)
		munmap(vm.mem, KVM_VM_MEM);
	if (vm.vm_fd >= 0)
		close(vm.vm_fd);
	if (vm.kvm_fd >= 0)
		close(vm.kvm_fd);
	close(sfd);
	return err ? 1 : 0;
}
