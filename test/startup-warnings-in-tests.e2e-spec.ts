import { Injectable, Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { Idempotent, IdempotencyModule, SqsEvent, SqsMessageHandler, SqsModule } from '../lib';
import { SqsTestClient } from '../lib/testing';

/**
 * Nest's testing module replaces the logger with one that prints errors only, so the warnings an app
 * earns at start-up (an event class that validates nothing, a default key its event lacks) never show
 * in a test built as the README builds one. `SqsTestClient.startupWarnings` holds them, for a test to
 * assert the app starts clean.
 */

@SqsEvent('note_taken')
class NoteTaken {
  text!: string; // no class-validator decorator: any body is accepted
}

@SqsEvent('comment_added')
class CommentAdded {
  @IsString() text!: string; // validated, but no `id`: the default key
}

@Injectable()
class Notes {
  @SqsMessageHandler(NoteTaken, { queue: 'notes' })
  async onNote(): Promise<void> {}

  @SqsMessageHandler(CommentAdded, { queue: 'notes' })
  @Idempotent()
  async onComment(): Promise<void> {}
}

@SqsEvent('task_done')
class TaskDone {
  @IsString() id!: string;
}

@Injectable()
class Tasks {
  @SqsMessageHandler(TaskDone, { queue: 'tasks' })
  @Idempotent()
  async onDone(): Promise<void> {}
}

function appModule(queue: string, handler: new (...args: never[]) => unknown) {
  @Module({
    imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({ queues: [{ name: queue }] })],
    providers: [handler],
  })
  class AppModule {}
  return AppModule;
}

describe('start-up warnings in a test (Test.createTestingModule, no logger set)', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(() => moduleRef?.close());

  async function start(module: ReturnType<typeof appModule>) {
    const stderr = jest.spyOn(process.stderr, 'write');
    const stdout = jest.spyOn(process.stdout, 'write');
    try {
      moduleRef = await Test.createTestingModule({ imports: [module] }).compile();
      await moduleRef.init();
      // What Nest itself printed: nothing (its testing logger drops warnings).
      const printed = [...stderr.mock.calls, ...stdout.mock.calls].map(([chunk]) => String(chunk)).join('');
      return { sqs: new SqsTestClient(moduleRef), printed };
    } finally {
      stderr.mockRestore();
      stdout.mockRestore();
    }
  }

  it("lists what the app warned about its handlers and event classes, which Nest's test logger dropped", async () => {
    const { sqs, printed } = await start(appModule('notes', Notes));
    expect(printed).not.toContain('has no class-validator decorators');
    expect(sqs.startupWarnings).toEqual([
      expect.stringMatching(/^NoteTaken \(the event of Notes\.onNote\) has no class-validator decorators/),
      expect.stringMatching(/^@Idempotent\(\) on Notes\.onComment reads its key from "id" \(the default\)/),
    ]);
  });

  it('is empty for an app that starts clean', async () => {
    const { sqs } = await start(appModule('tasks', Tasks));
    expect(sqs.startupWarnings).toEqual([]);
    expect((await sqs.send({ id: 't-1' }, { queue: 'tasks' })).status).toBe('OK');
  });
});
