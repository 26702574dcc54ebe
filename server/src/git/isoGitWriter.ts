/**
 * isomorphic-git, which the desk uses only to write run history into a repository. It is most of
 * the desk's code by size, so the build makes this module a file of its own (`dist/isoGitWriter.js`)
 * that is loaded the first time history is exported, and every other start skips parsing it.
 */
import git from 'isomorphic-git';

export const writeBlob = git.writeBlob;
export const writeTree = git.writeTree;
export const writeCommit = git.writeCommit;
export const writeRef = git.writeRef;
