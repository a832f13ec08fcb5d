/*
 * infile.c - opening input files; directories are refused (infile.h).
 */
#include "aisim/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int infile_open_fd(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    int en = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
    if (en) {
        close(fd);
        errno = en;
        return -1;
    }
    return fd;
}

FILE *infile_open(const char *path, const char *mode)
{
    int fd = infile_open_fd(path);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, mode);
    if (!f) {
        int en = errno;
        close(fd);
        errno = en;
    }
    return f;
}
