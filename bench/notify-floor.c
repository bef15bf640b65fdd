/* What one seccomp user notification costs an exec, whatever the supervisor does with it:
 * the floor under gate's exec check (issue 22). Forks and execs /bin/true N times:
 *   mode -1: no filter;
 *   mode  0: execve notified, answered at once with CONTINUE (the floor);
 *   mode  1: the same, after the reads gate's supervisor makes for a program no rule names
 *            (path, argv's pointers and argv[0] from the caller's memory; the file opened,
 *            looked at and its first 256 bytes read through /proc/PID/root).
 * Prints the mean microseconds per fork+exec+wait. bench/notify-floor.py runs the modes
 * interleaved and compares medians. Built by that script with `cc -O2`. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void send_fd(int sock, int fd) {
    char byte = 'L', space[CMSG_SPACE(sizeof(int))];
    struct iovec io = {&byte, 1};
    struct msghdr m = {0};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    m.msg_control = space;
    m.msg_controllen = sizeof space;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    if (sendmsg(sock, &m, 0) < 0) _exit(3);
}

static int receive_fd(int sock) {
    char byte, space[CMSG_SPACE(sizeof(int))];
    struct iovec io = {&byte, 1};
    struct msghdr m = {0};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    m.msg_control = space;
    m.msg_controllen = sizeof space;
    if (recvmsg(sock, &m, 0) <= 0) _exit(0);
    int fd;
    memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
    return fd;
}

static void supervise(int listener, int work) {
    ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, 1); /* SYNC_WAKE_UP, as gate's */
    for (;;) {
        struct pollfd p = {listener, POLLIN, 0};
        if (poll(&p, 1, -1) < 0) continue;
        if (!(p.revents & POLLIN)) _exit(0); /* hung up: nothing left under the filter */
        struct seccomp_notif req;
        memset(&req, 0, sizeof req);
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) continue;
        if (work) {
            char buf[4096], path[64];
            struct stat st;
            struct iovec local = {buf, 256}, remote = {(void *)req.data.args[0], 256};
            process_vm_readv(req.pid, &local, 1, &remote, 1, 0);
            remote.iov_base = (void *)req.data.args[1];
            process_vm_readv(req.pid, &local, 1, &remote, 1, 0);
            remote.iov_base = *(void **)buf;
            process_vm_readv(req.pid, &local, 1, &remote, 1, 0);
            snprintf(path, sizeof path, "/proc/%d/root/bin/true", req.pid);
            int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
            fstat(fd, &st);
            read(fd, buf, 256);
            close(fd);
        }
        struct seccomp_notif_resp resp = {req.id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE};
        ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    }
}

int main(int argc, char **argv) {
    int mode = argc > 1 ? atoi(argv[1]) : 0, n = argc > 2 ? atoi(argv[2]) : 1000;
    if (mode >= 0) {
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair)) return 2;
        if (fork() == 0) { /* twice, as gate's supervisor is never the command's child */
            if (fork() == 0) {
                close(pair[0]);
                supervise(receive_fd(pair[1]), mode == 1);
            }
            _exit(0);
        }
        wait(NULL);
        close(pair[1]);
        struct sock_filter f[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {4, f};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return 2;
        int listener = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                               SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
        if (listener < 0) return 2;
        send_fd(pair[0], listener);
        close(listener);
        close(pair[0]);
    }
    double start = now_ns();
    for (int i = 0; i < n; i++) {
        pid_t child = fork();
        if (child == 0) {
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        int status;
        waitpid(child, &status, 0);
        if (status != 0) return 1;
    }
    printf("%.2f\n", (now_ns() - start) / n / 1000);
    return 0;
}
