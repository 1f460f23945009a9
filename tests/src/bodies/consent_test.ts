import assert from "node:assert/strict";
import { consent } from "../../../src/bodies/consent.ts";
import { parseBody } from "../../../src/bodies/issues.ts";
import type { BodyOptions } from "../../../src/bodies/text.ts";
import { GatewayError } from "../../../src/psd2/errors.ts";
import { consentBody, dayFromToday, IBAN } from "../../support/requests.ts";

const OPTIONS: BodyOptions = {
  unknown: "reject",
  charset: "interface",
  maxBulk: 10,
  allowHttp: false,
};
const schema = consent(OPTIONS, () => dayFromToday(0));

function problem(access: Record<string, unknown>) {
  try {
    parseBody(schema, { ...consentBody(), access });
    return undefined;
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    return { path: error.path, text: error.message };
  }
}

Deno.test("consent() accepts access.additionalInformation with ownerName and trustedBeneficiaries", () => {
  const account = { iban: IBAN.debtor };
  assert.equal(
    problem({
      accounts: [account],
      additionalInformation: { ownerName: [account], trustedBeneficiaries: [] },
    }),
    undefined,
  );
  assert.equal(
    problem({ balances: [], additionalInformation: { ownerName: [] } }),
    undefined,
  );
  const bad = problem({ accounts: [account], additionalInformation: { ownerName: [{}] } });
  assert.equal(bad?.path, "access.additionalInformation.ownerName[0]");
  assert.match(bad?.text ?? "", /exactly one of/);
  const unknown = problem({ accounts: [account], additionalInformation: { balances: [] } });
  assert.equal(unknown?.path, "access.additionalInformation.balances");
  const alone = problem({ allPsd2: "allAccounts", additionalInformation: { ownerName: [] } });
  assert.equal(alone?.path, "access.additionalInformation");
  assert.match(alone?.text ?? "", /must come with accounts, balances or transactions/);
});

Deno.test("consent() accepts access.restrictedTo as cash account types where no account is named", () => {
  assert.equal(
    problem({ availableAccounts: "allAccounts", restrictedTo: ["CACC", "SVGS"] }),
    undefined,
  );
  assert.equal(problem({ accounts: [], restrictedTo: ["CACC"] }), undefined);
  const lower = problem({ availableAccounts: "allAccounts", restrictedTo: ["cacc"] });
  assert.equal(lower?.path, "access.restrictedTo[0]");
  assert.match(lower?.text ?? "", /cash account type of 4 capital letters/);
  const named = problem({ accounts: [{ iban: IBAN.debtor }], restrictedTo: ["CACC"] });
  assert.equal(named?.path, "access.restrictedTo");
  assert.match(named?.text ?? "", /name no account/);
  const only = problem({ restrictedTo: ["CACC"] });
  assert.equal(only?.path, "access");
  assert.match(only?.text ?? "", /must request some access/);
});
