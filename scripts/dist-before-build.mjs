// electron-builder's beforeBuild hook (electron-builder.yml): the app is bundled, so there are no
// node_modules to install, rebuild or pack. Resolving to false says so (electron-builder then
// treats node_modules as handled outside it and packs none into app.asar).
export default async function beforeBuild() {
  return false;
}
