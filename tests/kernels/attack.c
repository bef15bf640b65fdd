/* The system calls the kernel tests' attacks need and busybox cannot make, built
 * statically by tests/kernels/vm.rs (gcc, libc6-dev) into the initramfs as
 * /bin/gate-attack. Each prints one line saying what the call answered, and exits 0
 * when it succeeded, 1 when it was refused.
 *
 *   gate-attack truncate PATH     truncate(PATH, 0): by path, no descriptor
 *   gate-attack open-trunc PATH   open(PATH, O_RDONLY | O_TRUNC): truncates while
 *                                 opening for reading only
 *   gate-attack mode3-ioctl PATH  open(PATH, access mode 3), then TIOCSWINSZ on it
 *                                 (12 rows, 34 columns): a terminal's size changed
 *                                 through a descriptor that asked for neither read
 *                                 nor write
 *   gate-attack kill-all SIGNAL   kill(-1, SIGNAL): every process the caller may
 *                                 signal
 *   gate-attack abstract-serve NAME    bind the abstract Unix socket @NAME and wait
 *                                      (30 s at most) for one connection
 *   gate-attack abstract-connect NAME  connect to the abstract Unix socket @NAME
 *   gate-attack tcp-serve PORT    listen on 127.0.0.1:PORT and print one line per
 *                                 connection accepted (for 30 s at most)
 *   gate-attack tcp-connect PORT  connect to 127.0.0.1:PORT
 *   gate-attack tcp-bind PORT     bind 127.0.0.1:PORT, then listen on it
 *   gate-attack tcp-listen -      listen on a TCP socket never bound (the kernel
 *                                 picks a port)
 *   gate-attack tcp-time PORT     200 connects to 127.0.0.1:PORT, where nothing
 *                                 listens, one socket each: prints the microseconds
 *                                 one took on average (each must be refused by the
 *                                 kernel, ECONNREFUSED)
 *   gate-attack tcp-race ALLOWED,FORBIDDEN  2000 connects from fresh sockets to an
 *                                 address that a second thread keeps switching
 *                                 between 127.0.0.1:ALLOWED and 127.0.0.1:FORBIDDEN,
 *                                 and a third keeps putting a socketpair end and a
 *                                 TCP socket by turns at the descriptor number the
 *                                 connects use: prints how many connected
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int answer(const char *what, int rc) {
    if (rc < 0) {
        printf("%s: refused: %s\n", what, strerror(errno));
        return 1;
    }
    printf("%s: done\n", what);
    return 0;
}

/* The address of the abstract socket @name, and its length. */
static socklen_t abstract(const char *name, struct sockaddr_un *addr) {
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    size_t len = strlen(name);
    if (len > sizeof addr->sun_path - 1) {
        len = sizeof addr->sun_path - 1;
    }
    memcpy(addr->sun_path + 1, name, len);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
}

/* 127.0.0.1:port. */
static struct sockaddr_in loopback(int port) {
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
}

/* The race: the address the connects use, and the ports it switches between. */
static struct sockaddr_in race_addr;
static volatile int race_ports[2], race_over, race_fd = -1;

static void *switch_ports(void *unused) {
    (void)unused;
    for (unsigned i = 0; !race_over; i++) {
        ((volatile struct sockaddr_in *)&race_addr)->sin_port = htons((unsigned short)race_ports[i & 1]);
    }
    return NULL;
}

static void *switch_descriptors(void *unused) {
    (void)unused;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) {
        return NULL;
    }
    for (unsigned i = 0; !race_over; i++) {
        int tcp = socket(AF_INET, SOCK_STREAM, 0);
        if (race_fd >= 0 && tcp >= 0) {
            dup2((i & 1) ? pair[0] : tcp, race_fd);
        }
        if (tcp >= 0) {
            close(tcp);
        }
    }
    return NULL;
}

static int race(const char *ports) {
    if (sscanf(ports, "%d,%d", (int *)&race_ports[0], (int *)&race_ports[1]) != 2) {
        fprintf(stderr, "gate-attack: tcp-race ALLOWED,FORBIDDEN\n");
        return 2;
    }
    race_addr = loopback(race_ports[0]);
    race_fd = socket(AF_INET, SOCK_STREAM, 0);
    pthread_t ports_thread, fds_thread;
    if (race_fd < 0 || pthread_create(&ports_thread, NULL, switch_ports, NULL) != 0 ||
        pthread_create(&fds_thread, NULL, switch_descriptors, NULL) != 0) {
        printf("tcp-race: refused: %s\n", strerror(errno));
        return 1;
    }
    int connected = 0;
    for (int i = 0; i < 2000; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) {
            continue;
        }
        if (connect(fd, (struct sockaddr *)&race_addr, sizeof race_addr) == 0) {
            connected++;
        }
        /* The same, at the number the third thread keeps changing. */
        if (connect(race_fd, (struct sockaddr *)&race_addr, sizeof race_addr) == 0) {
            connected++;
        }
        close(fd);
    }
    race_over = 1;
    pthread_join(ports_thread, NULL);
    pthread_join(fds_thread, NULL);
    printf("tcp-race: %d connected\n", connected);
    return 0;
}

static int tcp(const char *what, const char *arg) {
    if (strcmp(what, "tcp-race") == 0) {
        return race(arg);
    }
    struct sockaddr_in addr = loopback(atoi(arg));
    if (strcmp(what, "tcp-time") == 0) {
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (int i = 0; i < 200; i++) {
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            /* Nothing listens there: the kernel answers at once, with no server's pace
             * in the time. Anything but ECONNREFUSED was not that answer. */
            if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0 ||
                errno != ECONNREFUSED) {
                return answer(what, -1);
            }
            close(fd);
        }
        clock_gettime(CLOCK_MONOTONIC, &end);
        long us = (end.tv_sec - start.tv_sec) * 1000000L + (end.tv_nsec - start.tv_nsec) / 1000;
        printf("tcp-time: %ld us per connect\n", us / 200);
        return 0;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (answer("socket", fd) != 0) {
        return 1;
    }
    if (strcmp(what, "tcp-connect") == 0) {
        return answer(what, connect(fd, (struct sockaddr *)&addr, sizeof addr));
    }
    if (strcmp(what, "tcp-listen") == 0) {
        return answer(what, listen(fd, 1));
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (answer("bind", bind(fd, (struct sockaddr *)&addr, sizeof addr)) != 0 ||
        answer("listen", listen(fd, 64)) != 0) {
        return 1;
    }
    if (strcmp(what, "tcp-bind") == 0) {
        return 0;
    }
    fflush(stdout);
    alarm(30);
    for (;;) {
        int conn = accept(fd, NULL, NULL);
        if (answer("accept", conn) != 0) {
            return 1;
        }
        fflush(stdout);
        close(conn);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: gate-attack truncate|open-trunc|mode3-ioctl|kill-all ARG\n");
        return 2;
    }
    const char *what = argv[1], *arg = argv[2];
    if (strcmp(what, "truncate") == 0) {
        return answer(what, truncate(arg, 0));
    }
    if (strcmp(what, "open-trunc") == 0) {
        return answer(what, open(arg, O_RDONLY | O_TRUNC));
    }
    if (strcmp(what, "mode3-ioctl") == 0) {
        int fd = open(arg, O_ACCMODE | O_NONBLOCK | O_NOCTTY);
        if (answer("open with access mode 3", fd) != 0) {
            return 1;
        }
        struct winsize size = {.ws_row = 12, .ws_col = 34};
        return answer("TIOCSWINSZ", ioctl(fd, TIOCSWINSZ, &size));
    }
    if (strcmp(what, "kill-all") == 0) {
        return answer(what, kill(-1, atoi(arg)));
    }
    if (strcmp(what, "abstract-serve") == 0 || strcmp(what, "abstract-connect") == 0) {
        struct sockaddr_un addr;
        socklen_t len = abstract(arg, &addr);
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (answer("socket", fd) != 0) {
            return 1;
        }
        if (what[9] == 'c') {
            return answer(what, connect(fd, (struct sockaddr *)&addr, len));
        }
        if (answer("bind", bind(fd, (struct sockaddr *)&addr, len)) != 0 ||
            answer("listen", listen(fd, 1)) != 0) {
            return 1;
        }
        fflush(stdout);
        alarm(30);
        return answer("accept", accept(fd, NULL, NULL));
    }
    if (strncmp(what, "tcp-", 4) == 0) {
        return tcp(what, arg);
    }
    fprintf(stderr, "gate-attack: unknown attack %s\n", what);
    return 2;
}
