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

/* Moves a regular file's offset past a UTF-8 byte-order mark (infile.h). */
static void skip_bom(int fd)
{
    struct stat st;
    unsigned char b[3];
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pread(fd, b, 3, 0) == 3 &&
        b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF)
        lseek(fd, 3, SEEK_SET);
}

FILE *infile_open(const char *path, const char *mode)
{
    int fd = infile_open_fd(path);
    if (fd < 0)
        return NULL;
    skip_bom(fd);
    FILE *f = fdopen(fd, mode);
    if (!f) {
        int en = errno;
        close(fd);
        errno = en;
    }
    return f;
}
