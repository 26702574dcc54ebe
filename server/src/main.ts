/** Entry of the desk server process, started by the extension (IPC) or by tests (--stdio). */
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { startDeskServer } from './rpc/server';

startDeskServer(createConnection(ProposedFeatures.all));
