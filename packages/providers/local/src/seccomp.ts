/**
 * A seccomp filter in the spirit of the default profiles of OCI runtimes, compiled to classic BPF
 * for bubblewrap's `--seccomp FD`. It is a deny list: syscalls that administer the kernel or
 * escape the sandbox's namespaces fail with EPERM (new mount API, namespace creation and joining,
 * module loading, kexec, bpf, perf, keyrings, clock setting, swap, reboot, io_uring,
 * handle-based opens); everything else is allowed. A foreign architecture (32-bit entry points)
 * is killed, so the filter cannot be bypassed through another syscall table.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;

const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;

const NS_FLAGS =
  0x10000000 /* CLONE_NEWUSER */ |
  0x00020000 /* CLONE_NEWNS */ |
  0x20000000 /* CLONE_NEWPID */ |
  0x40000000 /* CLONE_NEWNET */ |
  0x04000000 /* CLONE_NEWUTS */ |
  0x08000000 /* CLONE_NEWIPC */ |
  0x02000000; /* CLONE_NEWCGROUP */

interface ArchTable {
  audit: number;
  clone: number;
  clone3: number;
  denied: number[];
  /** Syscall numbers at or above this belong to another ABI (x32) and are refused. */
  abiLimit?: number | undefined;
}

const X86_64: ArchTable = {
  audit: 0xc000003e,
  clone: 56,
  clone3: 435,
  abiLimit: 0x40000000,
  // prettier-ignore
  denied: [
    163 /* acct */, 248 /* add_key */, 321 /* bpf */, 305 /* clock_adjtime */, 227 /* clock_settime */, 174 /* create_module */,
    176 /* delete_module */, 300 /* fanotify_init */, 313 /* finit_module */, 177 /* get_kernel_syms */, 175 /* init_module */,
    173 /* ioperm */, 172 /* iopl */, 312 /* kcmp */, 320 /* kexec_file_load */, 246 /* kexec_load */, 250 /* keyctl */,
    212 /* lookup_dcookie */, 165 /* mount */, 279 /* move_pages */, 303 /* name_to_handle_at */, 180 /* nfsservctl */,
    304 /* open_by_handle_at */, 298 /* perf_event_open */, 155 /* pivot_root */, 178 /* query_module */, 179 /* quotactl */,
    169 /* reboot */, 249 /* request_key */, 308 /* setns */, 164 /* settimeofday */, 167 /* swapon */, 168 /* swapoff */, 139 /* sysfs */,
    156 /* _sysctl */, 103 /* syslog */, 166 /* umount2 */, 272 /* unshare */, 134 /* uselib */, 323 /* userfaultfd */, 136 /* ustat */,
    425 /* io_uring_setup */, 426 /* io_uring_enter */, 427 /* io_uring_register */, 428 /* open_tree */, 429 /* move_mount */,
    430 /* fsopen */, 431 /* fsconfig */, 432 /* fsmount */, 433 /* fspick */, 442 /* mount_setattr */, 443 /* quotactl_fd */,
  ],
};

const AARCH64: ArchTable = {
  audit: 0xc00000b7,
  clone: 220,
  clone3: 435,
  // prettier-ignore
  denied: [
    89 /* acct */, 217 /* add_key */, 280 /* bpf */, 266 /* clock_adjtime */, 112 /* clock_settime */, 106 /* delete_module */,
    262 /* fanotify_init */, 273 /* finit_module */, 105 /* init_module */, 272 /* kcmp */, 294 /* kexec_file_load */, 104 /* kexec_load */,
    219 /* keyctl */, 18 /* lookup_dcookie */, 40 /* mount */, 239 /* move_pages */, 264 /* name_to_handle_at */,
    265 /* open_by_handle_at */, 241 /* perf_event_open */, 41 /* pivot_root */, 60 /* quotactl */, 142 /* reboot */, 218 /* request_key */,
    268 /* setns */, 170 /* settimeofday */, 224 /* swapon */, 225 /* swapoff */, 116 /* syslog */, 39 /* umount2 */, 97 /* unshare */,
    282 /* userfaultfd */, 425 /* io_uring_setup */, 426 /* io_uring_enter */, 427 /* io_uring_register */, 428 /* open_tree */,
    429 /* move_mount */, 430 /* fsopen */, 431 /* fsconfig */, 432 /* fsmount */, 433 /* fspick */, 442 /* mount_setattr */,
    443 /* quotactl_fd */,
  ],
};

function seccompArchTable(arch: string = process.arch): ArchTable | null {
  if (arch === 'x64') return X86_64;
  if (arch === 'arm64') return AARCH64;
  return null;
}

interface Insn {
  code: number;
  jt: number;
  jf: number;
  k: number;
  /** Jump target label resolved at assembly time. */
  to?: 'allow' | 'eperm' | 'enosys';
}

/** The filter program as bytes (struct sock_filter[]), or null on an architecture without a table. */
export function compileSeccompFilter(arch: string = process.arch): Buffer | null {
  const table = seccompArchTable(arch);
  if (!table) return null;
  const body: Insn[] = [
    { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: 4 }, // seccomp_data.arch
    { code: BPF_JEQ_K, jt: 1, jf: 0, k: table.audit },
    { code: BPF_RET_K, jt: 0, jf: 0, k: RET_KILL_PROCESS },
    { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: 0 }, // seccomp_data.nr
  ];
  if (table.abiLimit !== undefined) body.push({ code: BPF_JGE_K, jt: 0, jf: 0, k: table.abiLimit, to: 'eperm' });
  // clone with namespace flags is refused; glibc falls back from clone3 (ENOSYS) to clone, whose flags we can see.
  body.push({ code: BPF_JEQ_K, jt: 0, jf: 0, k: table.clone3, to: 'enosys' });
  body.push({ code: BPF_JEQ_K, jt: 0, jf: 3, k: table.clone });
  body.push({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: 16 }); // low word of args[0]: the flags
  body.push({ code: BPF_JSET_K, jt: 0, jf: 0, k: NS_FLAGS, to: 'eperm' });
  body.push({ code: BPF_RET_K, jt: 0, jf: 0, k: RET_ALLOW });
  for (const nr of table.denied) body.push({ code: BPF_JEQ_K, jt: 0, jf: 0, k: nr, to: 'eperm' });
  const allowAt = body.length;
  body.push({ code: BPF_RET_K, jt: 0, jf: 0, k: RET_ALLOW });
  const epermAt = body.length;
  body.push({ code: BPF_RET_K, jt: 0, jf: 0, k: RET_ERRNO | EPERM });
  const enosysAt = body.length;
  body.push({ code: BPF_RET_K, jt: 0, jf: 0, k: RET_ERRNO | ENOSYS });
  const targets = { allow: allowAt, eperm: epermAt, enosys: enosysAt };

  const out = Buffer.alloc(body.length * 8);
  body.forEach((insn, index) => {
    let jt = insn.jt;
    if (insn.to) {
      jt = targets[insn.to] - index - 1;
      if (jt > 255) throw new Error('seccomp filter jump out of range');
    }
    out.writeUInt16LE(insn.code, index * 8);
    out.writeUInt8(jt, index * 8 + 2);
    out.writeUInt8(insn.jf, index * 8 + 3);
    out.writeUInt32LE(insn.k >>> 0, index * 8 + 4);
  });
  return out;
}
