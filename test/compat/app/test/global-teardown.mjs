export default async function globalTeardown() {
  await globalThis.__FAUXQS__?.stop();
}
