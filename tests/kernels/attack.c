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
 */
#define _GNU_SOURCE
#include <errno.h>
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
    fprintf(stderr, "gate-attack: unknown attack %s\n", what);
    return 2;
}
