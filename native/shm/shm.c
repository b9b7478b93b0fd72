// The system shared memory extension's mapping (issue 13): POSIX shm_open + mmap, as Triton's
// src/shared_memory_manager.cc does, with the mapping handed to JavaScript as an external ArrayBuffer.
//
//   stat(key)                   -> the object's size in bytes
//   map(key, offset, byteSize)  -> an ArrayBuffer of byteSize bytes over the object from offset
//   unmap(arrayBuffer)          -> munmap now and detach the buffer (views of it read as empty)
//   copy(address, byteLength, target, targetOffset)
//                               -> copies byteLength bytes at address (inside a mapping that map()
//                                  made, in any thread of the process) into the ArrayBuffer target
//   view(address, byteLength)   -> an ArrayBuffer over those bytes, without a copy and without owning
//                                  them (nothing is unmapped when it is collected)
//
// map's result carries the mapping's address (`address`, the first byte of `buffer`) so that another
// thread of the process, which cannot be handed the ArrayBuffer itself, can reach the mapping: an
// execution thread gathers a batch's inputs straight from the clients' regions, or hands ONNX Runtime a
// view of a lone request's input (issue 13). The caller keeps the mapping alive while such a copy or
// view may be used (src/util/mapped-memory.ts).
//
// mmap needs a page-aligned file offset: the mapping starts at the page holding `offset` and the
// ArrayBuffer begins `offset % page` bytes into it. The descriptor is closed once mapped. A buffer
// never unmapped explicitly is unmapped by its finalizer when collected.
//
// Why our own addon: of the packages on npm, mmap-io and shmmap do not build on Node 20, and
// shm-typed-array cannot map an object another process created (it expects its own header).
#define NAPI_VERSION 8
#include <node_api.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
  void* base;
  size_t length;
  int is_mapped;
} Mapping;

#define CHECK(call)                                   \
  do {                                                \
    if ((call) != napi_ok) {                          \
      napi_throw_error(env, NULL, "N-API call failed: " #call); \
      return NULL;                                    \
    }                                                 \
  } while (0)

static napi_value throw_errno(napi_env env, const char* what, int error) {
  char code[32];
  char message[256];
  snprintf(code, sizeof code, "E%d", error);
  snprintf(message, sizeof message, "%s: %s", what, strerror(error));
  napi_value code_value, message_value, error_value, errno_value;
  napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &code_value);
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &message_value);
  napi_create_error(env, code_value, message_value, &error_value);
  napi_create_int32(env, error, &errno_value);
  napi_set_named_property(env, error_value, "errno", errno_value);
  napi_throw(env, error_value);
  return NULL;
}

static int read_key(napi_env env, napi_value value, char* key, size_t size) {
  size_t length = 0;
  if (napi_get_value_string_utf8(env, value, key, size, &length) != napi_ok) return 0;
  return length < size - 1;
}

static int read_size(napi_env env, napi_value value, size_t* out) {
  double number = 0;
  if (napi_get_value_double(env, value, &number) != napi_ok) return 0;
  if (!(number >= 0) || number > 9007199254740991.0) return 0;
  *out = (size_t)number;
  return 1;
}

static napi_value Stat(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  char key[4096];
  if (argc < 1 || !read_key(env, argv[0], key, sizeof key)) {
    napi_throw_type_error(env, NULL, "stat(key): key must be a string shorter than 4096 bytes");
    return NULL;
  }
  int fd = shm_open(key, O_RDWR, S_IRUSR | S_IWUSR);
  if (fd == -1) return throw_errno(env, "shm_open", errno);
  struct stat status;
  int result = fstat(fd, &status);
  int error = errno;
  close(fd);
  if (result == -1) return throw_errno(env, "fstat", error);
  napi_value size;
  CHECK(napi_create_double(env, (double)status.st_size, &size));
  return size;
}

static void Finalize(napi_env env, void* data, void* hint) {
  (void)env;
  (void)data;
  Mapping* mapping = hint;
  if (mapping->is_mapped) munmap(mapping->base, mapping->length);
  free(mapping);
}

static napi_value Map(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  char key[4096];
  size_t offset = 0, byte_size = 0;
  if (argc < 3 || !read_key(env, argv[0], key, sizeof key) || !read_size(env, argv[1], &offset) || !read_size(env, argv[2], &byte_size)) {
    napi_throw_type_error(env, NULL, "map(key, offset, byteSize): a string and two non-negative integers");
    return NULL;
  }
  int fd = shm_open(key, O_RDWR, S_IRUSR | S_IWUSR);
  if (fd == -1) return throw_errno(env, "shm_open", errno);
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t start = offset - offset % page;
  size_t length = byte_size + (offset - start);
  // mmap refuses a zero length: a zero-byte region still gets one page, so every region has a mapping.
  if (length == 0) length = 1;
  void* base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)start);
  int error = errno;
  close(fd);
  if (base == MAP_FAILED) return throw_errno(env, "mmap", error);
  Mapping* mapping = malloc(sizeof *mapping);
  if (mapping == NULL) {
    munmap(base, length);
    return throw_errno(env, "malloc", ENOMEM);
  }
  mapping->base = base;
  mapping->length = length;
  mapping->is_mapped = 1;
  napi_value buffer;
  if (napi_create_external_arraybuffer(env, (uint8_t*)base + (offset - start), byte_size, Finalize, mapping, &buffer) != napi_ok) {
    munmap(base, length);
    free(mapping);
    napi_throw_error(env, NULL, "napi_create_external_arraybuffer failed");
    return NULL;
  }
  napi_value hint;
  CHECK(napi_create_external(env, mapping, NULL, NULL, &hint));
  napi_value result;
  CHECK(napi_create_object(env, &result));
  CHECK(napi_set_named_property(env, result, "buffer", buffer));
  CHECK(napi_set_named_property(env, result, "handle", hint));
  napi_value address;
  CHECK(napi_create_double(env, (double)(uintptr_t)((uint8_t*)base + (offset - start)), &address));
  CHECK(napi_set_named_property(env, result, "address", address));
  return result;
}

static napi_value Unmap(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  Mapping* mapping = NULL;
  if (argc < 2 || napi_get_value_external(env, argv[1], (void**)&mapping) != napi_ok || mapping == NULL) {
    napi_throw_type_error(env, NULL, "unmap(buffer, handle): the buffer and handle map() returned");
    return NULL;
  }
  if (mapping->is_mapped) {
    // Detach first: no JavaScript view can reach the pages once they are gone.
    CHECK(napi_detach_arraybuffer(env, argv[0]));
    if (munmap(mapping->base, mapping->length) == -1) return throw_errno(env, "munmap", errno);
    mapping->is_mapped = 0;
  }
  return NULL;
}

static napi_value Copy(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  size_t address = 0, byte_length = 0, target_offset = 0;
  void* target = NULL;
  size_t target_length = 0;
  if (argc < 4 || !read_size(env, argv[0], &address) || address == 0 || !read_size(env, argv[1], &byte_length) ||
      napi_get_arraybuffer_info(env, argv[2], &target, &target_length) != napi_ok || !read_size(env, argv[3], &target_offset)) {
    napi_throw_type_error(env, NULL, "copy(address, byteLength, target, targetOffset): an address, a length, an ArrayBuffer and an offset");
    return NULL;
  }
  if (target_offset > target_length || byte_length > target_length - target_offset) {
    napi_throw_range_error(env, NULL, "copy: the bytes do not fit in the target from targetOffset");
    return NULL;
  }
  memcpy((uint8_t*)target + target_offset, (const void*)(uintptr_t)address, byte_length);
  return NULL;
}

static napi_value View(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  size_t address = 0, byte_length = 0;
  if (argc < 2 || !read_size(env, argv[0], &address) || address == 0 || !read_size(env, argv[1], &byte_length)) {
    napi_throw_type_error(env, NULL, "view(address, byteLength): an address and a length");
    return NULL;
  }
  napi_value buffer;
  CHECK(napi_create_external_arraybuffer(env, (void*)(uintptr_t)address, byte_length, NULL, NULL, &buffer));
  return buffer;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
      {"stat", NULL, Stat, NULL, NULL, NULL, napi_enumerable, NULL},
      {"map", NULL, Map, NULL, NULL, NULL, napi_enumerable, NULL},
      {"unmap", NULL, Unmap, NULL, NULL, NULL, napi_enumerable, NULL},
      {"copy", NULL, Copy, NULL, NULL, NULL, napi_enumerable, NULL},
      {"view", NULL, View, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  CHECK(napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
