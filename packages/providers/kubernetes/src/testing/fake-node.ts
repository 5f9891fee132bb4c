import Docker from 'dockerode';

/** The node name every fake pod is scheduled on. */
export const FAKE_NODE_NAME = 'fake-node-1';

/** What the fake kubelet needs of a pod's first container. */
export interface ContainerPlan {
  podKey: string;
  image: string;
  command: string[];
  workingDir: string | undefined;
  env: string[];
  user: string | undefined;
  capDrop: string[];
  noNewPrivileges: boolean;
  readOnlyRoot: boolean;
  nanoCpus: number | undefined;
  memoryBytes: number | undefined;
  /** `hostDir:containerPath` bind mounts (the pod's emptyDir volumes). */
  binds: string[];
}

export type StartOutcome =
  | { ok: true; containerId: string }
  | { ok: false; reason: 'ErrImagePull' | 'CreateContainerError'; message: string };

/**
 * The fake cluster's one node: pods run as `docker run --network none` containers, so exec, files
 * and commits are real. Every container carries the fake server's label and is removed with it.
 */
export class FakeNode {
  readonly docker = new Docker();
  constructor(private readonly serverId: string) {}

  async imageExists(image: string): Promise<boolean> {
    try {
      await this.docker.getImage(image).inspect();
      return true;
    } catch {
      return false;
    }
  }

  async start(plan: ContainerPlan): Promise<StartOutcome> {
    if (!(await this.imageExists(plan.image))) {
      return { ok: false, reason: 'ErrImagePull', message: `rpc error: failed to pull and unpack image "${plan.image}": not found` };
    }
    try {
      const container = await this.create(plan);
      await container.start();
      return { ok: true, containerId: container.id };
    } catch (error) {
      return { ok: false, reason: 'CreateContainerError', message: (error as Error).message };
    }
  }

  /** Runs an init container to its end; answers its exit code. */
  async runToCompletion(plan: ContainerPlan): Promise<number> {
    const container = await this.create(plan);
    try {
      await container.start();
      const result = (await container.wait()) as { StatusCode: number };
      return result.StatusCode;
    } finally {
      await this.remove(container.id);
    }
  }

  private create(plan: ContainerPlan): Promise<Docker.Container> {
    return this.docker.createContainer({
      Image: plan.image,
      Cmd: plan.command,
      ...(plan.command.length > 0 ? { Entrypoint: [] as string[] } : {}),
      WorkingDir: plan.workingDir,
      Env: plan.env,
      User: plan.user,
      Labels: { 'sandcast-k8s-fake': this.serverId, 'sandcast-k8s-fake.pod': plan.podKey },
      HostConfig: {
        NetworkMode: 'none',
        CapDrop: plan.capDrop,
        SecurityOpt: plan.noNewPrivileges ? ['no-new-privileges'] : [],
        ReadonlyRootfs: plan.readOnlyRoot,
        NanoCpus: plan.nanoCpus,
        Memory: plan.memoryBytes,
        Binds: plan.binds,
      },
    });
  }

  async remove(containerId: string): Promise<void> {
    await this.docker
      .getContainer(containerId)
      .remove({ force: true, v: true })
      .catch(() => undefined);
  }

  async running(containerId: string): Promise<boolean> {
    try {
      return (await this.docker.getContainer(containerId).inspect()).State.Running;
    } catch {
      return false;
    }
  }

  /** What the committer Job does on a real node: commit the container and push it (here: tag it locally). */
  async commit(containerId: string, ref: string): Promise<string> {
    const at = ref.lastIndexOf(':');
    const slash = ref.lastIndexOf('/');
    const [repo, tag] = at > slash ? [ref.slice(0, at), ref.slice(at + 1)] : [ref, 'latest'];
    const result = (await this.docker.getContainer(containerId).commit({ repo, tag, pause: true })) as { Id: string };
    return result.Id;
  }

  async removeImage(ref: string): Promise<void> {
    await this.docker.getImage(ref).remove({ force: true });
  }

  async removeAll(): Promise<void> {
    const containers = await this.docker.listContainers({ all: true, filters: { label: [`sandcast-k8s-fake=${this.serverId}`] } });
    await Promise.all(containers.map((c) => this.remove(c.Id)));
  }
}
