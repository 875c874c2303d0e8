import React, { ChangeEvent } from 'react';

import {
  DataSourcePluginOptionsEditorProps,
  onUpdateDatasourceJsonDataOption,
  onUpdateDatasourceResetOption,
  onUpdateDatasourceSecureJsonDataOption,
  updateDatasourcePluginJsonDataOption,
} from '@grafana/data';
import { Field, FieldSet, Input, RadioButtonGroup, SecretInput, SecretTextArea, Switch, TextArea } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { FlamediffOptions, FlamediffSecureOptions, Tables } from '../types';

type Props = DataSourcePluginOptionsEditorProps<FlamediffOptions, FlamediffSecureOptions>;
/** The jsonData options edited as plain text. */
type TextOption = 'host' | 'username' | 'defaultDatabase' | 'dialTimeout' | 'queryTimeout' | 'queueTimeout';
/** The jsonData limits edited as whole numbers, with their defaults (docs/DATASOURCE.md). */
type NumberOption = 'maxStacks' | 'maxQueries' | 'maxConnections' | 'maxQueryMemory';

const s = strings.config;
const WIDTH = 40;
/** Each table setting with its default name (pkg/storage.DefaultTables). */
const tableNames: Array<[keyof Tables, string]> = [
  ['runs', 'runs'],
  ['stacks', 'stacks'],
  ['frames', 'frames'],
  ['samples', 'samples'],
  ['runStacks', 'run_stacks'],
  ['changes', 'changes'],
  ['runFunctions', 'run_functions'],
  ['functionTimelines', 'function_timelines'],
];
const certs: Array<[keyof FlamediffSecureOptions, string]> = [
  ['tlsCACert', s.tlsCACert],
  ['tlsClientCert', s.tlsClientCert],
  ['tlsClientKey', s.tlsClientKey],
];

/**
 * ConfigEditor edits the connection (docs/DATASOURCE.md): server, TLS, credentials,
 * timeouts, table names, limits and system-frame rules. Secrets go to secureJsonData.
 */
export function ConfigEditor(props: Props) {
  const { options } = props;
  const json = options.jsonData;
  const secure = options.secureJsonFields ?? {};
  const set = <K extends keyof FlamediffOptions>(key: K, value: FlamediffOptions[K]) =>
    updateDatasourcePluginJsonDataOption(props, key, value);
  // A text option of jsonData: one Field with one Input.
  const text = (key: TextOption, label: string, placeholder?: string, testId?: string) => (
    <Field label={label}>
      <Input
        data-testid={testId}
        width={WIDTH}
        value={json[key] ?? ''}
        placeholder={placeholder}
        onChange={onUpdateDatasourceJsonDataOption(props, key)}
      />
    </Field>
  );

  // A whole-number option of jsonData: empty means the backend's default.
  const whole = (key: NumberOption, placeholder: string, description?: string) => (
    <Field label={s[key]} description={description}>
      <Input
        data-testid={selectors.config[key]}
        width={WIDTH}
        type="number"
        min={1}
        value={json[key] ?? ''}
        placeholder={placeholder}
        onChange={(e: ChangeEvent<HTMLInputElement>) =>
          set(key, e.currentTarget.value === '' ? undefined : Number(e.currentTarget.value))
        }
      />
    </Field>
  );

  return (
    <div data-testid={selectors.config.root}>
      <FieldSet label={s.server}>
        {text('host', s.host, 'localhost', selectors.config.host)}
        <Field label={s.port}>
          <Input
            data-testid={selectors.config.port}
            width={WIDTH}
            type="number"
            value={json.port ?? ''}
            placeholder={json.protocol === 'http' ? '8123' : '9000'}
            onChange={(e: ChangeEvent<HTMLInputElement>) =>
              set('port', e.currentTarget.value === '' ? undefined : Number(e.currentTarget.value))
            }
          />
        </Field>
        <Field label={s.protocol} data-testid={selectors.config.protocol}>
          <RadioButtonGroup<'native' | 'http'>
            options={[
              { value: 'native', label: 'Native' },
              { value: 'http', label: 'HTTP' },
            ]}
            value={json.protocol ?? 'native'}
            onChange={(v) => set('protocol', v)}
          />
        </Field>
        <Field label={s.secure}>
          <span data-testid={selectors.config.secure}>
            <Switch value={json.secure ?? false} onChange={(e) => set('secure', e.currentTarget.checked)} />
          </span>
        </Field>
        {json.secure && (
          <>
            <Field label={s.tlsSkipVerify}>
              <Switch
                value={json.tlsSkipVerify ?? false}
                onChange={(e) => set('tlsSkipVerify', e.currentTarget.checked)}
              />
            </Field>
            {certs.map(([key, label]) => (
              <Field label={label} key={key}>
                <SecretTextArea
                  cols={WIDTH}
                  rows={4}
                  isConfigured={Boolean(secure[key])}
                  onReset={() => onUpdateDatasourceResetOption(props, key)}
                  onChange={onUpdateDatasourceSecureJsonDataOption(props, key)}
                />
              </Field>
            ))}
          </>
        )}
      </FieldSet>
      <FieldSet label={s.credentials}>
        {text('username', s.username, undefined, selectors.config.username)}
        <Field label={s.password}>
          <SecretInput
            data-testid={selectors.config.password}
            width={WIDTH}
            isConfigured={Boolean(secure.password)}
            value={options.secureJsonData?.password ?? ''}
            onReset={() => onUpdateDatasourceResetOption(props, 'password')}
            onChange={onUpdateDatasourceSecureJsonDataOption(props, 'password')}
          />
        </Field>
        {text('defaultDatabase', s.defaultDatabase, 'flamediff', selectors.config.database)}
      </FieldSet>
      <FieldSet label={s.timeouts}>
        {text('dialTimeout', s.dialTimeout, '10')}
        {text('queryTimeout', s.queryTimeout, '60')}
      </FieldSet>
      <FieldSet label={s.tables}>
        <Field label={s.distributed} description={s.distributedHelp}>
          <RadioButtonGroup<'detect' | 'global' | 'plain'>
            options={[
              { value: 'detect', label: s.distributedDetect },
              { value: 'global', label: 'GLOBAL IN' },
              { value: 'plain', label: 'IN' },
            ]}
            value={json.distributed === undefined ? 'detect' : json.distributed ? 'global' : 'plain'}
            onChange={(v) => set('distributed', v === 'detect' ? undefined : v === 'global')}
          />
        </Field>
        {tableNames.map(([t, name], i) => (
          <Field label={name} key={t} description={i === 0 ? s.tablesHelp : undefined}>
            <Input
              width={WIDTH}
              value={json.tables?.[t] ?? ''}
              placeholder={name}
              onChange={(e: ChangeEvent<HTMLInputElement>) =>
                set('tables', { ...json.tables, [t]: e.currentTarget.value })
              }
            />
          </Field>
        ))}
      </FieldSet>
      <FieldSet label={s.limits}>
        {whole('maxStacks', '10000000', s.limitsHelp)}
        {whole('maxQueries', '1')}
        {text('queueTimeout', s.queueTimeout, '30', selectors.config.queueTimeout)}
        {whole('maxConnections', String(2 * (json.maxQueries ?? 1) + 1))}
        {whole('maxQueryMemory', '640')}
      </FieldSet>
      <FieldSet label={s.systemFrames}>
        <Field description={s.systemFramesHelp}>
          <TextArea
            data-testid={selectors.config.systemFrames}
            cols={WIDTH}
            rows={4}
            defaultValue={(json.systemFrames ?? []).join('\n')}
            onBlur={(e) => set('systemFrames', splitRules(e.currentTarget.value))}
          />
        </Field>
      </FieldSet>
    </div>
  );
}

/** splitRules keeps one rule per non-blank line. */
export function splitRules(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}
