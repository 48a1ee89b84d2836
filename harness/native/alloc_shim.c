/* Allocator shim preloaded before libfaketime into redis-server.
 *
 * Debian's redis-server links jemalloc, and jemalloc's initialisation calls clock_gettime
 * while holding its init lock; libfaketime's clock_gettime allocates on first use, which
 * re-enters jemalloc and deadlocks the server at start. Preloaded first, this library routes
 * every allocation to glibc's allocator (so jemalloc is never initialised) and stubs the
 * jemalloc-only entry points redis calls (mallctl, nallocx, malloc_stats_print, ...) so that
 * they report "not available" instead of touching jemalloc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <semaphore.h>
#include <sys/mman.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

void *malloc(size_t size) { return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { return __libc_calloc(n, size); }
void *realloc(void *ptr, size_t size) { return __libc_realloc(ptr, size); }
void free(void *ptr) { __libc_free(ptr); }
void cfree(void *ptr) { __libc_free(ptr); }
void *memalign(size_t alignment, size_t size) { return __libc_memalign(alignment, size); }
void *valloc(size_t size) { return __libc_valloc(size); }
void *pvalloc(size_t size) { return __libc_pvalloc(size); }

void *aligned_alloc(size_t alignment, size_t size) {
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) {
        return EINVAL;
    }
    void *p = __libc_memalign(alignment, size);
    if (p == NULL && size != 0) {
        return ENOMEM;
    }
    *out = p;
    return 0;
}

/* glibc's malloc_usable_size, found in libc itself: a plain RTLD_NEXT lookup would find
 * jemalloc's, which knows nothing of glibc's chunks. */
static size_t (*libc_usable_size)(void *);

__attribute__((constructor)) static void find_libc_usable_size(void) {
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (libc != NULL) {
        libc_usable_size = (size_t (*)(void *))dlsym(libc, "malloc_usable_size");
    }
}

size_t malloc_usable_size(void *ptr) {
    if (ptr == NULL) {
        return 0;
    }
    if (libc_usable_size == NULL) {
        find_libc_usable_size();
    }
    return libc_usable_size != NULL ? libc_usable_size(ptr) : 0;
}

/* jemalloc-only API: nothing to control or report without jemalloc. */
int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen) {
    (void)name; (void)oldp; (void)oldlenp; (void)newp; (void)newlen;
    return ENOENT;
}

int mallctlnametomib(const char *name, size_t *mibp, size_t *miblenp) {
    (void)name; (void)mibp; (void)miblenp;
    return ENOENT;
}

int mallctlbymib(const size_t *mib, size_t miblen, void *oldp, size_t *oldlenp, void *newp,
                 size_t newlen) {
    (void)mib; (void)miblen; (void)oldp; (void)oldlenp; (void)newp; (void)newlen;
    return ENOENT;
}

void malloc_stats_print(void (*write_cb)(void *, const char *), void *cbopaque,
                        const char *opts) {
    (void)write_cb; (void)cbopaque; (void)opts;
}

/* The size an allocation of `size` would really get: glibc rounds to 16 bytes. */
size_t nallocx(size_t size, int flags) {
    (void)flags;
    return (size + 15) & ~(size_t)15;
}

void *mallocx(size_t size, int flags) { (void)flags; return __libc_malloc(size); }
void dallocx(void *ptr, int flags) { (void)flags; __libc_free(ptr); }
void sdallocx(void *ptr, size_t size, int flags) { (void)size; (void)flags; __libc_free(ptr); }

/* libfaketime creates /dev/shm/faketime_shm_<pid> and sem.faketime_sem_<pid> at start and
 * names them in FAKETIME_SHARED, for children of the process to share its clock; a process
 * that is killed never removes them. lockpick's nodes have no such children, so with
 * LOCKPICK_FAKETIME_UNLINK set the names are removed as soon as they exist: the process
 * keeps its mappings, and nothing is left in /dev/shm whatever way it ends. Preloaded before
 * libfaketime, this constructor runs after libfaketime's (ELF runs the initialisers of the
 * preloaded objects in reverse load order). */
__attribute__((constructor)) static void unlink_faketime_shm(void) {
    const char *shared = getenv("FAKETIME_SHARED");
    if (shared == NULL || getenv("LOCKPICK_FAKETIME_UNLINK") == NULL) {
        return;
    }
    char sem[256], shm[256];
    if (sscanf(shared, "%255s %255s", sem, shm) == 2) {
        sem_unlink(sem);
        shm_unlink(shm);
    }
}
